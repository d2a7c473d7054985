#include "gpu/h2d_copy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "mmprof/error.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mmprof::gpu {

double mb_per_s(uint64_t bytes, double ms) noexcept {
  if (!(ms > 0)) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(bytes) / 1e6 / (ms / 1e3);
}

bool is_page_locked(const void* host) {
#ifdef MMPROF_HAVE_CUDA
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, host) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer is not an error worth keeping
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
#else
  (void)host;
  return false;
#endif
}

H2DCopier::H2DCopier(size_t capacity) {
  for (auto& slot : slots_)
    slot.emplace(capacity);
}

const CudaBuffer& H2DCopier::copy(const std::vector<HostSpan>& spans, const CudaStream& compute) {
  Slot& slot = *slots_[next_];
  size_t total = 0;
  for (const HostSpan& s : spans)
    total += s.bytes;
  if (total > slot.buffer.size()) {
    throw RunError(fmt::format("a batch of {} bytes exceeds the device buffer of {} bytes", total,
                               slot.buffer.size()));
  }
  // The compute that read this buffer two batches ago must be past its reads.
  if (slot.in_use) slot.released.make_wait(stream_);
  start_.record(stream_);
  size_t offset = 0;
  for (const HostSpan& s : spans) {
    copy_to_device_async(static_cast<std::byte*>(slot.buffer.data()) + offset, s.data, s.bytes,
                         stream_);
    offset += s.bytes;
  }
  end_.record(stream_);
  end_.make_wait(compute);
  end_.synchronize();
  last_ = H2DCopy{total, CudaEvent::elapsed_ms(start_, end_),
                  !spans.empty() && is_page_locked(spans.front().data)};
  return slot.buffer;
}

void H2DCopier::consumed(const CudaStream& compute) {
  Slot& slot = *slots_[next_];
  slot.released.record(compute);
  slot.in_use = true;
  next_ = (next_ + 1) % slots_.size();
}

}  // namespace mmprof::gpu
