#pragma once
// `mmprof inspect FILE` for a GPU events file written by libmmprof_cupti_inject.so: the GPU
// summary over the process' GPU-active window, and optionally the planted-schedule check
// (--planted PLAN.json, from tools/gpu_planted).
#include <string>

#include "gpu/gpu_events_file.hpp"
#include "gpu/planted_check.hpp"

namespace mmprof::cli {

// The readable summary (pure): header facts, busy/idle over the GPU-active window (first busy
// event's start to last busy event's end), counts, H2D MB/s, copy/compute overlap, top kernels.
std::string format_gpu_events_summary(const gpu::GpuEventsFile& file);
// The planted check as a table (pure).
std::string format_planted_check(const gpu::PlantedCheck& check, double tolerance);

// Prints the summary (and the check); throws RunError when the check fails, InputError for an
// unreadable file.
int run_inspect_gpu_events(const std::string& events_path, const std::string& plan_path,
                           double tolerance);

}  // namespace mmprof::cli
