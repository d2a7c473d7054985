#pragma once
// summary.json's `gpu` block from what a phase measured: CUPTI's activity (idle, data-wait idle,
// kernel busy, copy/compute overlap, H2D bandwidth) over the measured steps' windows, and the
// batches' host-to-device copies timed with CUDA events. Pure: shared by the stand-in's phase
// (run/gpu_phase) and a user's job (external/).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_event.hpp"
#include "gpu/gpu_timeline.hpp"
#include "gpu/h2d_copy.hpp"
#include "mmprof/config.hpp"
#include "mmprof/summary_resources.hpp"

namespace mmprof {

// True when the run's step uses the GPU: step.kind=gemm, or step.device cuda / cuda:N.
bool step_uses_gpu(const StepConfig& step);

// Event-based H2D figures: per-copy bandwidth (bytes / event elapsed) over the measured copies.
struct H2DCopyStats {
  int64_t copies = 0, pinned_copies = 0;
  uint64_t bytes = 0;
  double ms = 0;                          // summed copy time
  std::vector<double> per_copy_mb_per_s;  // one per copy
};
H2DCopyStats h2d_copy_stats(const std::vector<gpu::H2DCopy>& copies);

// What CUPTI tracing produced, or why it did not.
struct GpuTraceResult {
  std::optional<std::string> unavailable;  // set when CUPTI could not trace
  std::vector<gpu::GpuEvent> events;
  uint64_t dropped_records = 0, incomplete_records = 0;
  std::string clock_method;
};

// summary.json's `gpu` block (pure). Fractions are of the union of the measured steps' windows;
// idle and busy figures are null when tracing was unavailable (its reason under cupti).
GpuFigures gpu_block(const GpuTraceResult& trace, const std::vector<gpu::Interval>& steps,
                     const std::vector<gpu::Interval>& waits,
                     const std::vector<gpu::H2DCopy>& copies);

}  // namespace mmprof
