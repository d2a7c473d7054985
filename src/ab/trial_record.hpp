#pragma once
// One trial of an experiment (one `mmprof baseline` child process) and what `mmprof ab` reads
// back from its run directory: the metric from summary.json, step/wait tails of the metric's
// phase from steps.csv, memory and errors from summary.json, steady.json and digests.csv.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ab/content_check.hpp"
#include "mmprof/config.hpp"

namespace mmprof {

// End-to-end samples/s when there is a step, else pipeline samples/s.
struct MetricChoice {
  std::string phase;  // "end_to_end" | "pipeline"
  std::string key;    // "throughput.<phase>.samples_per_s"
  std::string why;
};
// `job`: the trials are a user's own job (its loop is the end-to-end phase).
MetricChoice choose_metric(const Config& base, bool job = false);
nlohmann::json to_json(const MetricChoice& m);

struct TrialRecord {
  int round = 0, position = 0;
  size_t arm = 0;
  std::string run_dir;  // relative to the experiment directory
  std::string status;   // complete | failed | interrupted
  int exit_code = 0;
  double wall_s = 0;
  std::optional<double> metric;  // samples/s
  std::optional<bool> steady, steady_extended;
  double step_p95 = NAN, step_p99 = NAN, wait_p95 = NAN, wait_p99 = NAN;  // ms, metric phase
  double pss_peak_mib = NAN, host_peak_mib = NAN;
  // What a layout changes besides speed: the first batch's wait, the delivery order's randomness
  // (summary.json shuffle.gap_ratio) and the share of sequential reads.
  double time_to_first_batch_ms = NAN, shuffle_gap_ratio = NAN, sequential_fraction = NAN;
  double stall_fraction = NAN;
  // The share of the dataset in the page cache when the metric phase's measured window began
  // (summary.json locality); NaN when not measured (a remote dataset, a user's job).
  double resident_at_window = NAN;
  int64_t errors = 0;
  DigestMap digests;
  // Why the trial does not test its arm although it ran (a job whose torch refused the factor's
  // DataLoader argument); empty when it does.
  std::string invalid;
  // A failed trial's summary message: how the job ended and the exception it raised (empty
  // when it did not fail, or failed before writing its summary).
  std::string failure;
  // Samples of the metric phase's measured steps by modality (image, video), from stages.csv:
  // mmprof's loader; empty for a user's job, whose rows name no modality.
  std::map<std::string, int64_t> measured_by_modality;
  // A user's job whose followed DataLoader iterates an IterableDataset (its sampler is torch's
  // _InfiniteConstantSampler): the dataset's class, a library's named ("WebDataset", "Images, a
  // litdata StreamingDataset"); empty for a map-style dataset and for mmprof's loader.
  std::string iterable_dataset;

  bool complete() const { return status == "complete" && metric.has_value(); }
};

// Fills the measured fields of `t` from its run directory (files that are missing stay unset).
void read_trial_outputs(const std::filesystem::path& run_dir, const MetricChoice& metric,
                        TrialRecord& t);

nlohmann::json to_json(const TrialRecord& t, const std::string& arm_id);

// " (<failure>)" of a failed trial that wrote why (its job's exit and exception), else "".
std::string failure_text(const TrialRecord& t);

// Why trial `t` cannot test a factor `key` that concerns one modality (image.*, video.*): its
// measured steps held no sample of it, so the setting was never applied. Empty when they held
// some, when the key concerns both or neither, or when the trial recorded no modality.
std::string unexercised_factor(const std::string& key, const TrialRecord& t);

}  // namespace mmprof
