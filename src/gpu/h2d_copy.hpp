#pragma once
// Host-to-device copies of delivered batches (issue 4): each batch's tokens, images and videos go
// from the loader's host memory (page-locked when loader.pin_memory allows it, pageable otherwise)
// to a device buffer with cudaMemcpyAsync on a dedicated copy stream, timed with CUDA events. The
// compute stream waits for the copy on the device (cudaStreamWaitEvent), so a batch's copy
// overlaps the previous batch's compute. Runs in the main process only: workers never touch CUDA.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/cuda_runtime.hpp"

namespace mmprof::gpu {

// One batch's copy: bytes moved and the copy stream's time between its start and end events.
struct H2DCopy {
  uint64_t bytes = 0;
  double ms = 0;
  bool pinned = false;  // the host source was page-locked (cudaPointerGetAttributes)
};

// Achieved bandwidth in MB/s (1 MB = 1e6 bytes); NaN when ms <= 0.
double mb_per_s(uint64_t bytes, double ms) noexcept;

// A contiguous host range to copy.
struct HostSpan {
  const void* data = nullptr;
  size_t bytes = 0;
};

// True when `host` points into page-locked memory the CUDA runtime knows (cudaHostAlloc'd or
// registered); false for pageable memory.
bool is_page_locked(const void* host);

class H2DCopier {
 public:
  // `capacity`: the largest batch in bytes. Two device buffers, used in turn, so one can be filled
  // while the compute stream still reads the other. Throws UnavailableError without a GPU.
  explicit H2DCopier(size_t capacity);

  // Copies the spans (packed one after the other) into the next device buffer on the copy stream,
  // makes `compute` wait for the copy, and blocks until the copy is done: the loader reuses the
  // host memory for its next batch. Returns the device buffer.
  const CudaBuffer& copy(const std::vector<HostSpan>& spans, const CudaStream& compute);
  // Tells the copier that `compute` has enqueued all its reads of the buffer copy() returned:
  // that buffer is not overwritten until `compute` gets past this point.
  void consumed(const CudaStream& compute);
  const std::optional<H2DCopy>& last() const noexcept { return last_; }

 private:
  struct Slot {
    explicit Slot(size_t capacity) : buffer(Memory::device, capacity) {}
    CudaBuffer buffer;
    CudaEvent released;  // recorded on the compute stream after its last read
    bool in_use = false;
  };
  CudaStream stream_;
  CudaEvent start_, end_;
  std::array<std::optional<Slot>, 2> slots_;
  size_t next_ = 0;
  std::optional<H2DCopy> last_;
};

}  // namespace mmprof::gpu
