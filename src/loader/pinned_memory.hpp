#pragma once
// The pin stage: page-locked host memory through cudaHostAlloc when a GPU is present, so H2D
// copies can run asynchronously at full bandwidth; pageable memory otherwise, and the run records
// which (with the reason). The only file of the loader that calls CUDA.
#include <cstddef>
#include <string>

namespace mmprof {

struct GpuAvailability {
  bool available = false;
  int devices = 0;
  std::string
      reason;  // why not, when unavailable ("built without CUDA", "cudaGetDeviceCount: ...")
};

// Asks the CUDA runtime whether a device exists (cached after the first call).
const GpuAvailability& gpu_availability();

// A page-locked buffer (cudaHostAlloc). Throws UnavailableError when no GPU is usable.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data() const noexcept { return data_; }
  size_t size() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace mmprof
