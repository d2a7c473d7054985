#pragma once
// `mmprof trace -- CMD`: the job's timeline as a Chrome Trace Event file (trace.json, for
// ui.perfetto.dev), built from the hook's records after the run: per rank, the training loop's
// waits and steps of the followed loader and every loader's iterator starts; per DataLoader
// worker, its fetches and sampled __getitem__ calls; the pin-memory thread's copies; memory per
// process from resources.csv; the GPU's kernels and copies when CUPTI traced them. All on
// CLOCK_MONOTONIC, as the records are, so the tracks line up.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "external/hook_records.hpp"
#include "external/job_timeline.hpp"
#include "gpu/gpu_event.hpp"
#include "mmprof/run_dir.hpp"

namespace mmprof::external {

struct JobTraceCounts {
  uint64_t events = 0;   // written to the file
  uint64_t dropped = 0;  // past max_events, counted and left out
};

// Writes `file` (atomically) and returns what it holds; `max_events` caps the events written
// (per-sample events go first when the cap is reached, per-step ones are always kept).
JobTraceCounts write_job_trace(const std::filesystem::path& file, const HookRecords& records,
                               const JobTimeline& timeline,
                               const std::vector<ResourceRow>& resources,
                               const std::vector<gpu::GpuEvent>& gpu_events, int64_t max_events);

}  // namespace mmprof::external
