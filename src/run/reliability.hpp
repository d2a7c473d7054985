#pragma once
// summary.json's "reliability" section, and what a baseline does with the members the dataset
// index refused (tar paths outside the shard, links, a shard cut mid-member).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"
#include "mmprof/summary_loading.hpp"

namespace mmprof {

// The worker-fault counters of every loader of a run (a run has a loader per loader phase).
class ReliabilityTally {
 public:
  // The current loader's counters so far (called after each batch it delivers).
  void observe(const LoaderStats& live);
  // Folds the current loader's counters into the run's totals.
  void loader_done();
  // summary.json "reliability": skipped_samples (distinct keys in errors.jsonl), rejected_members
  // (members the index refused), ignored_files (neither samples nor captions), respawns,
  // retries, hung_workers, worker_faults (sentences).
  Reliability figures(int64_t skipped_samples, const Dataset& dataset) const;

 private:
  int64_t respawns_ = 0, retries_ = 0, hung_ = 0;
  std::vector<std::string> faults_;
  LoaderStats live_;
};

// The errors.jsonl line of a refused member (stage "index", phase "index").
nlohmann::json rejection_error_line(const Dataset& dataset, const RejectedEntry& entry);

// The errors.jsonl line of an ignored file (kind "ignored"; not an error of a sample).
nlohmann::json ignored_line(const Dataset& dataset, const IgnoredFile& entry);

// Under loader.on_error=fail, a RunError naming the first refused member; nothing otherwise.
void enforce_rejection_policy(const Config& config, const Dataset& dataset);

}  // namespace mmprof
