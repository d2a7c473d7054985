#pragma once
// The planted-schedule check of the device check: mmprof_gpu_planted (tools/gpu_planted) prints
// its plan ("mmprof.gpu_plan/1"); the injection library records its GPU events; this compares
// the idle time mmprof measures from the events with the idle time the program planted.
//
// Window: from the first to the last `kernel_name` kernel in the events. Checked figures:
//  - idle: measured idle in the window vs the planted (kernels - 1) * gap_ns;
//  - data-wait idle: idle overlapping the plan's data_wait host gaps vs their summed length
//    (tests the CUPTI -> CLOCK_MONOTONIC conversion: the gaps are host CLOCK_MONOTONIC times);
//  - the number of planted kernels, and at least the planted pinned/pageable H2D bytes before
//    the schedule.
// Reported as cross-checks, not gated: the idle the GPU itself saw (%globaltimer gaps between
// the planted kernels) and the host-measured gaps.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/gpu_event.hpp"
#include "gpu/gpu_timeline.hpp"

namespace mmprof::gpu {

struct PlantedGap {
  Interval host;  // CLOCK_MONOTONIC
  bool data_wait = false;
};

struct PlantedPlan {
  std::string kernel_name;
  int64_t kernels = 0, kernel_ns = 0, gap_ns = 0;
  uint64_t pinned_bytes = 0, pageable_bytes = 0;
  std::vector<PlantedGap> gaps;
  std::vector<Interval> gpu_kernels;  // %globaltimer
};

// Parses the program's stdout JSON; `source` names it in errors (InputError).
PlantedPlan parse_planted_plan(const nlohmann::json& plan, const std::string& source);

struct PlantedFigure {
  std::string name;
  double planted_ms = 0, measured_ms = 0;
  double relative_error = 0;  // |measured - planted| / planted
  bool gated = true;          // counts toward passed
  bool ok = true;
};

struct PlantedCheck {
  std::vector<PlantedFigure> figures;
  std::vector<std::string> failures;  // one sentence each
  GpuSummary window_summary;          // the summary over the schedule window
  bool passed() const noexcept { return failures.empty(); }
};

PlantedCheck check_planted(const PlantedPlan& plan, const std::vector<GpuEvent>& events,
                           double tolerance);

}  // namespace mmprof::gpu
