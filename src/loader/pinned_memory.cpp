#include "loader/pinned_memory.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mmprof {

const GpuAvailability& gpu_availability() {
  static const GpuAvailability cached = [] {
    GpuAvailability g;
#ifdef MMPROF_HAVE_CUDA
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      g.reason = fmt::format("cudaGetDeviceCount failed: {} ({})", cudaGetErrorString(rc),
                             static_cast<int>(rc));
    } else if (count == 0) {
      g.reason = "no CUDA device is visible";
    } else {
      g.available = true;
      g.devices = count;
    }
#else
    g.reason = "mmprof was built without CUDA (MMPROF_WITH_CUDA=OFF or no toolkit found)";
#endif
    return g;
  }();
  return cached;
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  const auto& gpu = gpu_availability();
  if (!gpu.available) throw UnavailableError("pinned memory is unavailable: " + gpu.reason);
#ifdef MMPROF_HAVE_CUDA
  const cudaError_t rc = cudaHostAlloc(&data_, bytes, cudaHostAllocDefault);
  if (rc != cudaSuccess) {
    throw UnavailableError(
        fmt::format("cudaHostAlloc of {} MB failed: {}", bytes >> 20, cudaGetErrorString(rc)));
  }
#endif
}

PinnedBuffer::~PinnedBuffer() {
#ifdef MMPROF_HAVE_CUDA
  if (data_ != nullptr) cudaFreeHost(data_);
#endif
}

}  // namespace mmprof
