#pragma once
// One main process's (one rank's) timeline from the hook's records (docs/external-hook.md): the
// followed loader's steps (one iteration of the training loop: from a `__next__` call of that
// loader to its next call), epoch gaps and the epoch-boundary wait, per-sample and per-batch
// stage times, per-worker load. Each result has figures(): its part of summary.json's job
// (mmprof/summary_job.hpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "external/hook_records.hpp"
#include "external/loader_choice.hpp"
#include "measure/worker_balance.hpp"
#include "mmprof/run_dir.hpp"
#include "mmprof/summary_job.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::external {

struct TimelineOptions {
  // --loader SELECT (as MMPROF_HOOK_LOADER): an integer is the construction order in the process
  // (from 0), anything else a dataset class name. Empty: the loader that returned most batches.
  std::string loader;
  int64_t warmup_steps = 0;          // the first N batches of the followed loader are warm-up
  std::optional<int64_t> max_steps;  // at most this many measured steps (after warm-up)
};

// The gaps between epochs of the followed loader: from an epoch_end to the next epoch's first
// call (validation, iterator re-creation). They are not steps.
struct EpochGaps {
  std::vector<double> gaps_ms;
  std::vector<double> iterator_start_ms;  // per epoch record: `__iter__` entry to its return
  EpochGapFigures figures() const;
};

// The first batch of an epoch against the other batches of the same size (measured steps).
struct EpochBoundary {
  std::optional<bool> persistent_workers;  // the loader's configuration
  std::optional<int64_t> batches_per_epoch;
  int64_t boundaries = 0;          // epoch-first batches among the measured steps (epoch >= 1)
  std::optional<double> stall_ms;  // their mean wait
  std::optional<double> steady_wait_ms;  // median wait of the other measured batches of that size
  std::optional<double> excess_ms;       // mean over boundaries of (wait - steady median)
  double threshold_ms = 0;               // excess above which it is a stall
  bool stall = false;
  std::string verdict;  // "no boundary stall" | "boundary stall: ..." | "no epoch boundary ..."
  EpochBoundaryFigures figures() const;  // summary.json's epoch_boundary
};

// Distributions (ms) of per-batch and per-sample times of the followed loader in the measured
// window (all of its records when it has no measured step).
struct StageTimes {
  Distribution fetch_ms, collate_ms, pin_ms, getitem_ms;
  // Inside __getitem__ (a torchvision dataset's): its loader ("decode"), the sum of its
  // transforms ("augment") and each transform by name, over the items whose parts were timed.
  Distribution decode_ms, augment_ms;
  std::map<std::string, Distribution> transform_ms;
  std::vector<int64_t> getitem_every;  // the sampling rates seen (MMPROF_HOOK_GETITEM_EVERY)
  bool getitem_per_call = false;       // __getitems__: one record per call, not per sample
  JobStageTimes figures() const;
};

// One main process (one rank) and its followed loader.
struct RankTimeline {
  int pid = 0;
  std::optional<int> rank;
  std::optional<int> loader;
  std::vector<StepRow> steps;    // the measured steps (phase end_to_end)
  std::vector<StageRow> stages;  // every getitem of the followed loader (step -1 outside steps)
  int64_t warmup_batches = 0, capped_batches = 0;
  int64_t dropped_unfinished = 0;  // no later call, epoch_end or stop: killed (or still running)
  int64_t dropped_epoch_left = 0;  // the loop left the epoch (break) before its end
  std::optional<int64_t> window_start_ns, window_end_ns;
  int64_t samples = 0;
  uint64_t bytes = 0;
  double step_ms_total = 0, wait_ms_total = 0;
  std::optional<double> samples_per_s;           // samples / sum(step_ms): the loop's own rate
  std::optional<double> samples_per_s_wall;      // samples / window (epoch gaps included)
  std::optional<double> stall_fraction;          // sum(wait_ms) / sum(step_ms)
  std::optional<double> time_to_first_batch_ms;  // first `__iter__` to the first batch returned
  Distribution step_ms, wait_ms, compute_ms;
  StageTimes stage_times;
  EpochGaps epoch_gaps;
  EpochBoundary epoch_boundary;
  WorkerBalance workers;

  std::optional<double> window_ms() const;
  JobRank figures() const;  // summary.json's job.ranks[]
};

RankTimeline rank_timeline(const HookRecords& records, const MainProcess& process,
                           const LoaderChoice& choice, const TimelineOptions& options);

}  // namespace mmprof::external
