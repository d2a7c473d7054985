#pragma once
// decode.gpu_backend=nvdec: JPEGs and clips decoded by NVIDIA's engines through FFmpeg's CUDA
// hwaccel, cropped, resized and normalized on the GPU (gpu/yuv_tensor.hpp) into the device batch,
// with no copy back to the host. What NVDEC does not decode (another image format, a profile or
// chroma layout it lacks) is decoded on the CPU in the main process and copied to the device
// row; those samples are counted as fallbacks. docs/gpu.md.
#include <memory>

#include "loader/device_decode.hpp"

namespace mmprof {

// Throws UnavailableError naming decode.gpu_backend=nvdec and the reason (no GPU, no driver,
// FFmpeg without CUDA, mmprof built without CUDA kernels).
std::unique_ptr<DeviceDecoder> make_nvdec_decoder(const Config& config);

}  // namespace mmprof
