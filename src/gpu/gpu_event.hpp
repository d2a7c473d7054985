#pragma once
// One activity of the GPU, in mmprof's terms: what CUPTI records become at the boundary
// (cupti_activity.cpp), what the injection library writes and what summaries and traces read.
// No vendor header is needed to use it.
#include <cstdint>
#include <string>

namespace mmprof::gpu {

enum class GpuEventKind : uint8_t { kernel, memcpy, memset, synchronization };
enum class CopyKind : uint8_t { none, h2d, d2h, d2d, other };

struct GpuEvent {
  GpuEventKind kind{};
  CopyKind copy = CopyKind::none;
  bool pinned_host = false;          // memcpy: the host side is page-locked
  int64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC, the clock of probe/clock.hpp
  uint32_t device = 0, stream = 0, correlation = 0;
  uint64_t bytes = 0;  // memcpy/memset: bytes moved or set; 0 otherwise
  std::string name;    // kernel name, or e.g. "memcpy HtoD"

  int64_t duration_ns() const noexcept { return end_ns - start_ns; }
  // Kernels, copies and sets occupy the GPU; synchronisation records only mark host waits.
  bool is_busy() const noexcept { return kind != GpuEventKind::synchronization; }
};

// Stable lower-case names ("kernel", "h2d", ...) used in event files and traces.
const char* to_string(GpuEventKind kind) noexcept;
const char* to_string(CopyKind kind) noexcept;
// The inverse of to_string; false when the name is unknown.
bool parse_kind(const std::string& name, GpuEventKind& out) noexcept;
bool parse_copy_kind(const std::string& name, CopyKind& out) noexcept;

}  // namespace mmprof::gpu
