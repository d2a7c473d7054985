#pragma once
// Decode on an NVIDIA GPU through FFmpeg's CUDA hwaccel (NVDEC; JPEG through FFmpeg's MJPEG
// hwaccel): frames stay in device memory and are handed out as DeviceFrame, plain device
// pointers and pitches, for the gpu layer's kernels to crop, resize and normalize. FFmpeg loads
// the driver (libcuda, libnvcuvid) itself; the device is the CUDA primary context of GPU 0, the
// one the CUDA runtime uses, so mmprof's kernels read FFmpeg's frames in the same context.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "decode/decode_error.hpp"

namespace mmprof {

// The planes of a decoded frame in device memory. nv12: Y, then interleaved Cb/Cr at half
// resolution (planes[1]); yuv444p: three full-resolution planes.
enum class DeviceLayout { nv12, yuv444p };
struct DeviceFrame {
  int width = 0, height = 0;
  DeviceLayout layout = DeviceLayout::nv12;
  const uint8_t* planes[3] = {nullptr, nullptr, nullptr};
  int pitch[3] = {0, 0, 0};
  bool full_range = false;  // JPEG's full-range YCbCr, else video's limited range
  bool bt709 = false;       // BT.709 matrix, else BT.601
};

// The decoder handed back a frame in host memory (a format or profile NVDEC lacks, which FFmpeg
// decoded in software instead) or in a layout the kernels do not take: the caller decodes the
// sample on the CPU instead and counts it.
class NotOnDevice : public DecodeError {
 public:
  using DecodeError::DecodeError;
};

// FFmpeg's CUDA device (an AVBufferRef) on `cuda_context`, a CUcontext the caller owns and keeps
// alive (gpu::runtime_context(): the CUDA runtime's primary context, so FFmpeg's frames and
// mmprof's kernels share it whatever flags it was made with). Throws UnavailableError with
// FFmpeg's reason ("Cannot load libcuda.so.1") when it cannot be made.
class CudaDevice {
 public:
  explicit CudaDevice(void* cuda_context);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;
  void* av_buffer() const noexcept { return ref_; }  // the AVBufferRef*

 private:
  void* ref_ = nullptr;
};

// Whole JPEGs decoded by FFmpeg's MJPEG decoder with the CUDA hwaccel. Any failure is
// NotOnDevice: the CPU decoder then has the last word on whether the JPEG is bad.
class CudaJpegDecoder {
 public:
  explicit CudaJpegDecoder(const CudaDevice& device);
  ~CudaJpegDecoder();
  CudaJpegDecoder(const CudaJpegDecoder&) = delete;
  CudaJpegDecoder& operator=(const CudaJpegDecoder&) = delete;
  // The frame stays valid until the next call (JFIF: full-range BT.601). Throws NotOnDevice.
  DeviceFrame decode(std::span<const uint8_t> jpeg);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace detail {
// The AVCodecContext::get_format of a CUDA decoder: AV_PIX_FMT_CUDA when FFmpeg offers it for an
// 8-bit 4:2:0 or 4:4:4 YCbCr stream (what the kernels take), else the software format FFmpeg
// would pick (the frame then comes back on the host: NotOnDevice).
int pick_cuda_format(void* codec_context, const int* formats);
// A decoded AVFrame* as a DeviceFrame; throws NotOnDevice when it is not a CUDA frame of a layout
// the kernels take.
DeviceFrame device_frame_of(const void* av_frame);
}  // namespace detail

}  // namespace mmprof
