#pragma once
// The GPU's half of decode on the device: a decoded YUV frame in device memory (NVDEC's NV12 or
// 4:4:4 planes) cropped, resized, converted to RGB, flipped and normalized into one CHW row of
// the device batch, by one CUDA kernel (yuv_tensor_kernel.cu) running gpu/yuv_pixel.hpp for
// each output pixel. Compiles without CUDA; the call
// then throws UnavailableError.
#include <cstdint>

namespace mmprof::gpu {

struct YuvPlanes {
  int width = 0, height = 0;
  bool nv12 = true;  // Y + interleaved CbCr at half resolution; else three full planes
  const uint8_t* planes[3] = {nullptr, nullptr, nullptr};
  int pitch[3] = {0, 0, 0};
  bool full_range = false, bt709 = false;
};

struct TensorRow {
  void* dst = nullptr;  // device memory: 3 x size x size, uint8 or float32
  int size = 0;
  bool float32 = true;
  bool flip = false;
  float mean[3] = {0, 0, 0}, stddev[3] = {1, 1, 1};  // float32: (v / 255 - mean) / stddev
};

// Crops (x, y, w, h) of the frame (source pixels) and writes the row. Per axis, shrinking
// averages each output pixel's footprint (a box filter with fractional edges, the antialiasing
// a resize to a small tensor needs); enlarging interpolates linearly. Nothing outside the crop
// is read (its edge pixels stand for what lies beyond). Each output pixel is rounded to 8 bits
// before it is normalized, as the CPU path normalizes 8-bit pixels. Enqueued on the legacy default
// stream, after FFmpeg's copies of the frame; throws RunError when the launch fails.
void yuv_to_tensor(const YuvPlanes& frame, int x, int y, int w, int h, const TensorRow& row);

// Throws UnavailableError when this build has no CUDA kernels (no nvcc at build time).
void require_kernels();

// Waits for everything enqueued on the legacy default stream (the rows written so far).
void finish_default_stream();

namespace detail {
// The kernel's launcher (yuv_tensor_kernel.cu); returns the cudaError_t of the launch.
int launch_yuv_to_tensor(const YuvPlanes& frame, int x, int y, int w, int h, const TensorRow& row);
}  // namespace detail

}  // namespace mmprof::gpu
