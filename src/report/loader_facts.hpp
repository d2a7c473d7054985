#pragma once
// What the report says about a loader's workers and its samples by class: the worker-balance fact
// (mmprof's own loader and a user's DataLoader alike), the slowest sample class, and their
// cross-checks against stages.csv. Pure: summary.json and stages.csv rows in, facts out.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"

namespace mmprof::report {

// Appends one fact when `balance` (summary.json's workers_balance, or a job rank's workers) is
// imbalanced: "<subject> are imbalanced (<flags>): <likely cause>", with `metric` (the busy
// spread's key). Nothing when it is balanced or was not judged.
void worker_balance_fact(const WorkerBalance& balance, const std::string& subject,
                         const std::string& metric, nlohmann::json& facts);

// mmprof's own loader: its workers' balance (imbalanced or even) and the slowest sample class of
// stage_breakdown (by mean decode per sample and by share of all decode time).
void add_loader_facts(const Summary& summary, nlohmann::json& facts);

// A summary figure and the same figure recomputed from a CSV file.
struct CsvCheck {
  std::string what;
  std::optional<double> summary, recomputed;
};
// stage_breakdown.by_format (samples, mean decode) and workers_balance.workers (samples, bytes,
// stage_ms) against the rows of `phase` in stages.csv. A worker's stage_ms counts each sample's
// work (read, and decode + augment unless the main process decoded it) inside the phase's
// measured window: from the first step's start to the last step's end in steps.csv (`steps`).
std::vector<CsvCheck> loader_cross_checks(const Summary& summary,
                                          const std::vector<StageRow>& stages,
                                          const std::vector<StepRow>& steps,
                                          const std::string& phase);

}  // namespace mmprof::report
