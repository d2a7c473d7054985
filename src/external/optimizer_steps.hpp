#pragma once
// Gradient accumulation of a user's job, from what the hook saw: its optimizer steps (torch's
// global post-step hook, `optim_step` records) against the measured batches of one rank.
#include <nlohmann/json.hpp>

#include "external/hook_records.hpp"
#include "external/job_timeline.hpp"

namespace mmprof::external {

// {"accum_steps": batches per optimizer step or null, "source": how it was found or why not,
//  "optimizer_steps": in the measured steps, "optimizers": how many stepped there,
//  "measured_batches"}. accum_steps is the median distance, in measured batches, between the
// batches in which the most-stepped optimizer stepped (1: every batch); null with why when it
// stepped fewer than twice in the window, when torch has no step hook (1.13) or the job stepped
// no torch.optim optimizer.
nlohmann::json gradient_accumulation(const HookRecords& records, const RankTimeline& rank);

}  // namespace mmprof::external
