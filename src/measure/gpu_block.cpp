#include "measure/gpu_block.hpp"

#include <cmath>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// NaN (no data) is written as null, never as a number.
json fraction(int64_t part_ns, int64_t window_ns) {
  return window_ns > 0 ? json(static_cast<double>(part_ns) / static_cast<double>(window_ns))
                       : json(nullptr);
}

json copies_json(const H2DCopyStats& s) {
  return {{"copies", s.copies},
          {"pinned_copies", s.pinned_copies},
          {"bytes", s.bytes},
          {"mb_per_s", finite_or_null(gpu::mb_per_s(s.bytes, s.ms))},
          {"per_copy_mb_per_s", to_json(describe(s.per_copy_mb_per_s), false)}};
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

json gpu_block(const GpuTraceResult& trace, const std::vector<gpu::Interval>& steps,
               const std::vector<gpu::Interval>& waits, const std::vector<gpu::H2DCopy>& copies) {
  const int64_t window_ns = gpu::total_ns(gpu::union_of(steps));
  json b;
  b["window"] = {{"phase", "end_to_end"},
                 {"steps", steps.size()},
                 {"ms", static_cast<double>(window_ns) / 1e6},
                 {"what", "union of the measured steps (warm-up excluded), CLOCK_MONOTONIC"}};
  // The batches' copies timed by CUDA events around them: an independent check of CUPTI's
  // figures (same copies, another clock), and the only H2D figures when CUPTI is unavailable.
  const H2DCopyStats copy_stats = h2d_copy_stats(copies);
  json& h2d = b["h2d"];
  h2d = {{"mb_per_s_pinned", nullptr},
         {"mb_per_s_pageable", nullptr},
         {"bytes", nullptr},
         {"copies", copy_stats.copies},
         {"cuda_events", copies_json(copy_stats)}};
  b["cupti"] = {{"unavailable", trace.unavailable ? json(*trace.unavailable) : json(nullptr)},
                {"dropped_records", trace.dropped_records},
                {"incomplete_records", trace.incomplete_records},
                {"clock_method", trace.clock_method}};
  const char* traced[] = {"idle_fraction", "data_wait_idle_fraction", "other_idle_fraction",
                          "kernel_busy_fraction", "copy_compute_overlap_fraction"};
  if (trace.unavailable) {
    for (const char* key : traced)
      b[key] = nullptr;
    b["events"] = nullptr;
    return b;
  }
  const gpu::GpuSummary s = gpu::summarize_gpu(trace.events, steps, waits);
  b["idle_fraction"] = fraction(s.idle_ns, s.window_ns);
  b["data_wait_idle_fraction"] = fraction(s.data_wait_idle_ns, s.window_ns);
  b["other_idle_fraction"] = fraction(s.idle_ns - s.data_wait_idle_ns, s.window_ns);
  b["kernel_busy_fraction"] = fraction(s.kernel_busy_ns, s.window_ns);
  b["copy_compute_overlap_fraction"] = finite_or_null(s.copy_compute_overlap_fraction);
  b["busy_ms"] = static_cast<double>(s.busy_ns) / 1e6;
  b["idle_ms"] = static_cast<double>(s.idle_ns) / 1e6;
  // CUPTI's memcpy records inside the windows (a batch is up to three records: tokens, images,
  // videos).
  h2d["mb_per_s_pinned"] = finite_or_null(s.h2d_mb_per_s_pinned);
  h2d["mb_per_s_pageable"] = finite_or_null(s.h2d_mb_per_s_pageable);
  h2d["bytes"] = s.h2d_bytes_pinned + s.h2d_bytes_pageable;
  b["events"] = {{"kernels", s.kernels},
                 {"memcpys", s.memcpys},
                 {"memsets", s.memsets},
                 {"synchronizations", s.synchronizations}};
  return b;
}

}  // namespace mmprof
