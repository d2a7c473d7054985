#include "gpu/gpu_timeline.hpp"

#include <algorithm>
#include <limits>

namespace mmprof::gpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : kNaN;
}

// The union of the intervals of the events that `keep` selects.
template <typename Pred>
std::vector<Interval> union_where(const std::vector<GpuEvent>& events, Pred keep) {
  std::vector<Interval> out;
  for (const GpuEvent& e : events) {
    if (keep(e)) out.push_back({e.start_ns, e.end_ns});
  }
  return union_of(std::move(out));
}

// The parts of `a_union` not covered by `b_union` (both sorted and disjoint).
std::vector<Interval> subtract(const std::vector<Interval>& a_union,
                               const std::vector<Interval>& b_union) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& a : a_union) {
    int64_t cursor = a.start_ns;
    while (j < b_union.size() && b_union[j].end_ns <= cursor)
      ++j;
    for (size_t k = j; k < b_union.size() && b_union[k].start_ns < a.end_ns; ++k) {
      if (b_union[k].start_ns > cursor) out.push_back({cursor, b_union[k].start_ns});
      cursor = std::max(cursor, b_union[k].end_ns);
    }
    if (cursor < a.end_ns) out.push_back({cursor, a.end_ns});
  }
  return out;
}

// Whether an event lies (at least partly) inside the windows; a zero-length event counts when
// its instant is inside one.
bool inside(const GpuEvent& e, const std::vector<Interval>& windows) {
  auto it = std::upper_bound(windows.begin(), windows.end(), e.start_ns,
                             [](int64_t t, const Interval& w) { return t < w.end_ns; });
  if (it == windows.end()) return false;
  if (e.end_ns <= e.start_ns) return it->start_ns <= e.start_ns;
  return it->start_ns < e.end_ns;
}

// Bytes / summed durations of the H2D copies with the given host memory, in MB/s.
void h2d_bandwidth(const std::vector<GpuEvent>& events, const std::vector<Interval>& windows,
                   bool pinned, uint64_t& bytes, double& mb_per_s) {
  int64_t duration_ns = 0;
  bytes = 0;
  for (const GpuEvent& e : events) {
    if (e.kind != GpuEventKind::memcpy || e.copy != CopyKind::h2d || e.pinned_host != pinned ||
        !inside(e, windows))
      continue;
    bytes += e.bytes;
    duration_ns += e.duration_ns();
  }
  mb_per_s = duration_ns > 0
                 ? static_cast<double>(bytes) / 1e6 / (static_cast<double>(duration_ns) / 1e9)
                 : kNaN;
}

}  // namespace

std::vector<Interval> union_of(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<Interval> intersect(const std::vector<Interval>& a_union,
                                const std::vector<Interval>& b_union) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a_union.size() && j < b_union.size()) {
    const int64_t start = std::max(a_union[i].start_ns, b_union[j].start_ns);
    const int64_t end = std::min(a_union[i].end_ns, b_union[j].end_ns);
    if (start < end) out.push_back({start, end});
    // Advance whichever ends first; the other may still meet the next interval.
    if (a_union[i].end_ns < b_union[j].end_ns) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

int64_t total_ns(const std::vector<Interval>& a_union) noexcept {
  int64_t sum = 0;
  for (const Interval& i : a_union)
    sum += i.length_ns();
  return sum;
}

int64_t overlap_ns(const std::vector<Interval>& a_union, const std::vector<Interval>& b_union) {
  return total_ns(intersect(a_union, b_union));
}

GpuSummary summarize_gpu(const std::vector<GpuEvent>& events, const std::vector<Interval>& steps,
                         const std::vector<Interval>& waits) {
  const std::vector<Interval> windows = union_of(steps);
  const auto busy =
      intersect(union_where(events, [](const GpuEvent& e) { return e.is_busy(); }), windows);
  const auto kernels = intersect(
      union_where(events, [](const GpuEvent& e) { return e.kind == GpuEventKind::kernel; }),
      windows);
  const auto copies = intersect(
      union_where(events, [](const GpuEvent& e) { return e.kind == GpuEventKind::memcpy; }),
      windows);
  const std::vector<Interval> idle = subtract(windows, busy);

  GpuSummary s;
  s.window_ns = total_ns(windows);
  s.busy_ns = total_ns(busy);
  s.idle_ns = s.window_ns - s.busy_ns;
  s.data_wait_idle_ns = overlap_ns(idle, union_of(waits));
  s.kernel_busy_ns = total_ns(kernels);
  s.idle_fraction = fraction(s.idle_ns, s.window_ns);
  s.data_wait_idle_fraction = fraction(s.data_wait_idle_ns, s.window_ns);
  s.other_idle_fraction = fraction(s.idle_ns - s.data_wait_idle_ns, s.window_ns);
  s.kernel_busy_fraction = fraction(s.kernel_busy_ns, s.window_ns);
  s.copy_compute_overlap_fraction = fraction(overlap_ns(copies, kernels), total_ns(copies));
  h2d_bandwidth(events, windows, true, s.h2d_bytes_pinned, s.h2d_mb_per_s_pinned);
  h2d_bandwidth(events, windows, false, s.h2d_bytes_pageable, s.h2d_mb_per_s_pageable);
  for (const GpuEvent& e : events) {
    if (!inside(e, windows)) continue;
    switch (e.kind) {
      case GpuEventKind::kernel:
        ++s.kernels;
        break;
      case GpuEventKind::memcpy:
        ++s.memcpys;
        break;
      case GpuEventKind::memset:
        ++s.memsets;
        break;
      case GpuEventKind::synchronization:
        ++s.synchronizations;
        break;
    }
  }
  return s;
}

}  // namespace mmprof::gpu
