#pragma once
// GPU idle time from the GPU's own timeline (pure functions, no vendor code).
//
// Idle = step time minus the union of busy intervals (kernels, memcpy, memset), clipped to the
// step windows. Idle is split into "waiting for data" (idle that overlaps the consumer's wait
// intervals) and other. Copy/compute overlap = time where a memcpy and a kernel run at once,
// divided by the memcpy time (union of copies).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/gpu_event.hpp"

namespace mmprof::gpu {

// Half-open [start_ns, end_ns); empty or inverted intervals are dropped by union_of.
struct Interval {
  int64_t start_ns = 0, end_ns = 0;
  int64_t length_ns() const noexcept { return end_ns - start_ns; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorted by start, overlapping and touching intervals merged, empty ones removed.
std::vector<Interval> union_of(std::vector<Interval> intervals);
// Total length of the intersection of two unions (each sorted and disjoint, as union_of gives).
int64_t overlap_ns(const std::vector<Interval>& a_union, const std::vector<Interval>& b_union);
// The parts of a union that intersect another union (both sorted and disjoint).
std::vector<Interval> intersect(const std::vector<Interval>& a_union,
                                const std::vector<Interval>& b_union);
// Total length of a sorted disjoint union.
int64_t total_ns(const std::vector<Interval>& a_union) noexcept;

struct GpuSummary {
  int64_t window_ns = 0;               // sum of the step windows (their union)
  int64_t busy_ns = 0;                 // union of kernels, copies and sets inside the windows
  int64_t idle_ns = 0;                 // window_ns - busy_ns
  int64_t data_wait_idle_ns = 0;       // idle time that overlaps the consumer's waits
  int64_t kernel_busy_ns = 0;          // union of kernels inside the windows
  double idle_fraction = 0;            // idle_ns / window_ns (NaN when window_ns == 0)
  double data_wait_idle_fraction = 0;  // data_wait_idle_ns / window_ns
  double other_idle_fraction = 0;      // (idle_ns - data_wait_idle_ns) / window_ns
  double kernel_busy_fraction = 0;     // kernel_busy_ns / window_ns
  // Host-to-device bandwidth: bytes / summed copy durations of the H2D copies inside the
  // windows, in MB/s (1 MB = 1e6 bytes); NaN when there is no such copy.
  double h2d_mb_per_s_pinned = 0;
  double h2d_mb_per_s_pageable = 0;
  uint64_t h2d_bytes_pinned = 0, h2d_bytes_pageable = 0;
  // overlap(union of copies, union of kernels) / union of copies; NaN without copies.
  double copy_compute_overlap_fraction = 0;
  size_t kernels = 0, memcpys = 0, memsets = 0, synchronizations = 0;  // events inside windows
};

// steps: the measured steps' [start, end] windows; waits: the consumer's wait intervals (a subset
// of the steps). Events are counted when they intersect a window and clipped to the windows.
GpuSummary summarize_gpu(const std::vector<GpuEvent>& events, const std::vector<Interval>& steps,
                         const std::vector<Interval>& waits);

}  // namespace mmprof::gpu
