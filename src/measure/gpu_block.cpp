#include "measure/gpu_block.hpp"

#include <cmath>

#include "rundir/summary.hpp"
#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

std::optional<double> fraction(int64_t part_ns, int64_t window_ns) {
  return window_ns > 0
             ? std::optional(static_cast<double>(part_ns) / static_cast<double>(window_ns))
             : std::nullopt;
}

H2DEventCopies event_copies(const H2DCopyStats& s) {
  return {.copies = s.copies,
          .pinned_copies = s.pinned_copies,
          .bytes = s.bytes,
          .mb_per_s = finite(gpu::mb_per_s(s.bytes, s.ms)),
          .per_copy_mb_per_s = rundir::spread_of(describe(s.per_copy_mb_per_s))};
}

}  // namespace

bool step_uses_gpu(const StepConfig& step) {
  return step.kind == StepKind::gemm || step.device.rfind("cuda", 0) == 0;
}

H2DCopyStats h2d_copy_stats(const std::vector<gpu::H2DCopy>& copies) {
  H2DCopyStats s;
  for (const gpu::H2DCopy& c : copies) {
    s.copies++;
    if (c.pinned) s.pinned_copies++;
    s.bytes += c.bytes;
    s.ms += c.ms;
    const double bw = gpu::mb_per_s(c.bytes, c.ms);
    if (std::isfinite(bw)) s.per_copy_mb_per_s.push_back(bw);
  }
  return s;
}

GpuFigures gpu_block(const GpuTraceResult& trace, const std::vector<gpu::Interval>& steps,
                     const std::vector<gpu::Interval>& waits,
                     const std::vector<gpu::H2DCopy>& copies) {
  const int64_t window_ns = gpu::total_ns(gpu::union_of(steps));
  GpuFigures b;
  b.window = {.phase = "end_to_end",
              .steps = static_cast<int64_t>(steps.size()),
              .ms = static_cast<double>(window_ns) / 1e6,
              .what = "union of the measured steps (warm-up excluded), CLOCK_MONOTONIC"};
  // The batches' copies timed by CUDA events around them: an independent check of CUPTI's
  // figures (same copies, another clock), and the only H2D figures when CUPTI is unavailable.
  const H2DCopyStats copy_stats = h2d_copy_stats(copies);
  b.h2d.copies = copy_stats.copies;
  b.h2d.cuda_events = event_copies(copy_stats);
  b.cupti = {.unavailable = trace.unavailable.value_or(""),
             .dropped_records = trace.dropped_records,
             .incomplete_records = trace.incomplete_records,
             .clock_method = trace.clock_method};
  if (trace.unavailable) return b;
  const gpu::GpuSummary s = gpu::summarize_gpu(trace.events, steps, waits);
  b.idle_fraction = fraction(s.idle_ns, s.window_ns);
  b.data_wait_idle_fraction = fraction(s.data_wait_idle_ns, s.window_ns);
  b.other_idle_fraction = fraction(s.idle_ns - s.data_wait_idle_ns, s.window_ns);
  b.kernel_busy_fraction = fraction(s.kernel_busy_ns, s.window_ns);
  b.copy_compute_overlap_fraction = finite(s.copy_compute_overlap_fraction);
  b.busy_ms = static_cast<double>(s.busy_ns) / 1e6;
  b.idle_ms = static_cast<double>(s.idle_ns) / 1e6;
  // CUPTI's memcpy records inside the windows (a batch is up to three records: tokens, images,
  // videos).
  b.h2d.mb_per_s_pinned = finite(s.h2d_mb_per_s_pinned);
  b.h2d.mb_per_s_pageable = finite(s.h2d_mb_per_s_pageable);
  b.h2d.bytes = s.h2d_bytes_pinned + s.h2d_bytes_pageable;
  b.events = GpuEventCounts{.kernels = static_cast<int64_t>(s.kernels),
                            .memcpys = static_cast<int64_t>(s.memcpys),
                            .memsets = static_cast<int64_t>(s.memsets),
                            .synchronizations = static_cast<int64_t>(s.synchronizations)};
  return b;
}

}  // namespace mmprof
