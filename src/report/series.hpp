#pragma once
// Chart data drawn from the run's CSV files (not from summary.json, so the charts are an
// independent view of the same measurements): latency CDFs from steps.csv, memory per process
// over time from resources.csv, the slowest samples from stages.csv.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"

namespace mmprof::report {

// Which per-step figure a latency CDF shows.
enum class StepFigure { wait, step };
const char* column_name(StepFigure f) noexcept;  // "wait_ms" | "step_ms"

// [[ms, cumulative fraction], ...] of `figure` over the steps of `phase`, dense in the tail:
// every 5 % to p85, then p90, p91 .. p98, p99, p99.1 .. p99.8, p99.9 .. as far as the steps resolve
// (fraction <= 1 - 1/n), then the maximum at fraction 1; empty when the phase has none.
nlohmann::json latency_cdf(const std::vector<StepRow>& steps, const std::string& phase,
                           StepFigure figure);

// [{process: "main (pid P)" | "worker N (pid P)" | "job process (pid P)" | "mmprof (pid P)" |
// "mmprof helper (pid P)", phases: [{phase, from_s}], points: [[s, rss_mib], ...], pss: [[s,
// pss_mib], ...]}], time from the first sample. `points` are RSS, sampled every interval for the
// process's whole life (at most `max_points`, evenly strided, the last kept); `pss` its PSS where
// the sampler read smaps_rollup (phase boundaries, and within its CPU budget: seconds apart for a
// large process), never mixed into the line. A process is named by its most specific role (a
// job's process becomes its main once the hook names it); `phases` are the run phases it was
// sampled in, from when.
nlohmann::json memory_series(const std::vector<ResourceRow>& resources, size_t max_points = 200);

// Where each measured step of `phase` spent its time, from steps.csv: {phase, parts: [names],
// columns: [{first_step, last_step, ms: [per part]}]}. Parts: wait (for the batch), h2d, compute,
// sync (a multi-rank run's), other (the rest of step_ms), each only when some step has it. With
// more than `max_columns` steps, consecutive steps are averaged into a column. Null when the
// phase has no step.
nlohmann::json step_breakdown(const std::vector<StepRow>& steps, const std::string& phase,
                              size_t max_columns = 100);

// The `n` samples of `phase` with the largest read + decode + augment time (or, for a user's
// own job, whose rows have only the whole __getitem__, the largest getitem_ms):
// [{key, worker, read_ms, decode_ms, augment_ms, total_ms, modality}] (+ getitem_ms where the
// row has it; a stage not measured is null).
nlohmann::json slowest_samples(const std::vector<StageRow>& stages, const std::string& phase,
                               size_t n);

// Which per-sample stage a mean is taken of.
enum class StageFigure { read, decode, augment, getitem };
// Mean of `figure` over the samples of `phase` that measured it (nullopt without any): the
// cross-check of the summary's per-stage means.
std::optional<double> stage_mean(const std::vector<StageRow>& stages, const std::string& phase,
                                 StageFigure figure);
// sum(wait_ms) / sum(step_ms) over `phase`'s steps.
std::optional<double> stall_from_steps(const std::vector<StepRow>& steps, const std::string& phase);

}  // namespace mmprof::report
