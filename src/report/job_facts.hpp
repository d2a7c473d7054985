#pragma once
// What the report says about a user's own job (summary source external) beyond the figures every
// run has: how it ended and what the hook saw, its ranks (the slowest one and the spread), its
// DataLoader workers (imbalance, copy-on-write growth) and the overrides torch refused. Pure:
// summary.json in, facts and tables out.
#include <nlohmann/json.hpp>

#include "mmprof/summary.hpp"

namespace mmprof::report {

// Appends {id, text, metric, value, unit} facts about the job to `facts`.
void add_job_facts(const Summary& summary, nlohmann::json& facts);

// A stand-in run (`mmprof baseline --like JOB_RUN`) beside the job it stands in for: the same
// figures of both ({metric, job, stand_in, ratio}), so the user knows how far the stand-in's
// what-if numbers can be trusted. null for any other run, or when JOB_RUN cannot be read.
nlohmann::json stand_in_comparison(const Summary& summary, const nlohmann::json& manifest);

// The report's view of the job: {command, exit, stopped_by, hook, ranks: [{rank, pid,
// stall_fraction, step_p50_ms, step_p99_ms, samples_per_s, steps, slowest}]}; null for mmprof's own
// runs.
nlohmann::json job_view(const Summary& summary);

}  // namespace mmprof::report
