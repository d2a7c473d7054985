#pragma once
// summary.json's `job` part, as types (mmprof/summary.hpp holds it): a user's own job run under
// mmprof (`mmprof baseline|trace -- CMD`): the command and how it ended, what the DataLoader hook
// saw (its status, each DataLoader's configuration and which one is followed), each main
// process's (rank's) timeline, the ranks compared, stuck fetches, copy-on-write growth. external/
// fills it (docs/external-hook.md has each figure); a figure not measured is empty (null). What
// the job itself determines is kept as the hook recorded it (JSON): a DataLoader's arguments (a
// user's values), the library versions, the exception that ended the job. clang-tidy 14 reports
// the implicit destructor of a struct holding nlohmann::json as throwing (as RunDir's,
// run_dir.hpp); nothing in it throws.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/summary_loading.hpp"
#include "mmprof/summary_resources.hpp"

namespace mmprof {

// job.loaders[].loaders[]: one DataLoader of a main process, and what it delivered.
struct LoaderSummary {
  int loader = 0;  // construction order in the process, from 0
  std::string origin, dataset;
  std::optional<int> num_workers;
  std::optional<int64_t> batch_size;
  int64_t batches = 0, epochs = 0;
  bool follow = false;  // MMPROF_HOOK_MAX_BATCHES applied to it
};

// job.loaders[]: which loader of one main process is followed, and why.
struct LoaderChoice {
  int pid = 0;
  std::optional<int> rank;
  std::vector<LoaderSummary> loaders;  // by id
  std::optional<int> chosen;           // empty: none matched --loader, or none returned a batch
  std::string reason;
};

// job.ranks[].latency_ms.stages: the followed loader's per-batch and per-sample times.
struct JobStageTimes {
  TimeSpread fetch, collate, pin, getitem;
  // Inside __getitem__ (a torchvision dataset's): its loader (decode), the sum of its transforms
  // (augment) and each transform by name.
  TimeSpread decode, augment;
  std::map<std::string, TimeSpread, std::less<>> transforms;
  std::vector<int64_t> getitem_every;  // the sampling rates seen (MMPROF_HOOK_GETITEM_EVERY)
  bool getitem_per_call = false;       // __getitems__: one record per call, not per sample
};

// job.ranks[].epoch_gaps: from an epoch's end to the next epoch's first call (not steps), and
// the iterators' start (`__iter__` to its return).
struct EpochGapFigures {
  int64_t count = 0;
  std::optional<double> mean_ms, max_ms, total_ms;
  int64_t iterator_starts = 0;
  std::optional<double> iterator_start_mean_ms, iterator_start_max_ms;
};

// job.ranks[]: one main process (one rank) and its followed loader.
struct JobRank {
  std::optional<int> rank;
  int pid = 0;
  std::optional<int> loader;
  // steps: measured, and the batches that were not steps.
  int64_t measured_steps = 0, warmup_batches = 0, capped_batches = 0;
  int64_t dropped_unfinished = 0, dropped_epoch_left = 0;
  // window: the measured steps' span, and their step and wait time.
  std::optional<int64_t> window_start_ns, window_end_ns;
  std::optional<double> window_ms;
  double step_ms_total = 0, wait_ms_total = 0;
  int64_t samples = 0;
  uint64_t bytes = 0;
  std::optional<double> samples_per_s, samples_per_s_wall;  // throughput
  std::optional<double> stall_fraction, time_to_first_batch_ms;
  TimeSpread step, wait, compute;  // latency_ms
  JobStageTimes stages;            // latency_ms.stages
  EpochGapFigures epoch_gaps;
  EpochBoundaryFigures epoch_boundary;
  WorkerBalance workers;
};

// job.rank_comparison: the ranks side by side over the steps every rank measured.
struct RankComparison {  // NOLINT(bugprone-exception-escape)
  struct Rank {
    int pid = 0;
    std::optional<int> rank;
    std::optional<double> stall_fraction, step_p50_ms, step_p99_ms, samples_per_s;
    int64_t steps = 0;
  };
  std::vector<Rank> ranks;
  int64_t common_steps = 0;  // step indices 0..common_steps-1 are measured by every rank
  // The rank with the largest total step_ms over the common steps; and the one with the largest
  // total wait_ms there (under synchronous data parallelism every rank's step holds the others'
  // delay, so the rank that waits longest for data is the one holding the job back).
  std::optional<size_t> slowest, most_waiting;  // indices into ranks
  std::optional<double> slowest_total_ms, most_waiting_wait_ms;
  std::optional<double> step_p50_spread;  // max / median of the per-rank step p50
  // measure/job_summary's straggler_analysis over the ranks' common steps (null with one rank),
  // the document job.json holds too: a straggler is established only by its one-sided test.
  nlohmann::json straggler;
};

// An error the hook met at one of its points, and a part of torch it could not wrap.
struct HookError {
  int pid = 0;
  std::string where, message;
  int64_t ns = 0;
};
struct HookGap {
  int pid = 0;
  std::string what, measures, why;
};

// job.hook (and job.dataloader.hook): "ok"; "partial (torch V): ..."; or "unavailable: <why>".
struct HookStatus {
  std::string status;
  int64_t files = 0, lines = 0, cut_lines = 0, unknown_records = 0;
  std::vector<HookError> errors;
  std::vector<HookGap> partial;  // "unpatched" in the file: one per torch name not wrapped
  bool ok() const noexcept { return status == "ok"; }
};

// job.dataloader.loaders[]: a DataLoader as the hook recorded its construction.
struct JobLoader {  // NOLINT(bugprone-exception-escape)
  int pid = 0;
  std::optional<int> rank;
  int loader = 0;
  bool followed = false;
  std::string origin;  // file:line of the DataLoader(...) call
  std::vector<std::string> stack;
  nlohmann::json config;     // its arguments and dataset, as the hook recorded them
  nlohmann::json overrides;  // --set loader.*: {applied, rejected (key: why), original}
  bool max_batches_follow = false;
};

// job.dataloader: the job as the hook saw it (the manifest holds the same).
struct JobDataLoaders {  // NOLINT(bugprone-exception-escape)
  HookStatus hook;
  nlohmann::json versions;  // the first main process's versions record; null without one
  bool versions_differ = false;
  std::vector<JobLoader> loaders;
  const JobLoader* followed() const;  // the loader mmprof followed, or null
};

// job.stuck[]: a worker fetch that did not end within MMPROF_HOOK_STUCK_S.
struct StuckFetch {
  int loader = 0, worker = -1, pid = 0;
  std::string indices, item;  // as the job's indices read ("" item: null)
  double seconds = 0;
  std::string text;
};

// job.digests: what the hook's content digests cost inside the job's loop.
struct DigestCost {
  int64_t batches = 0, in_measured_steps = 0;
  double total_ms = 0, max_ms = 0;
  std::string text;
};

// job.cow[]: one DataLoader worker's USS growth through the measured window (PyTorch #13246).
struct CowGrowth {
  int pid = 0;
  std::string process;  // who it is ("worker 0 of rank 1"), when the hook identified it
  int64_t points = 0;
  double span_s = 0;
  std::optional<double> slope_mib_per_min;  // least squares, MiB
  std::optional<double> slope_ci95_low_mib_per_min, slope_ci95_high_mib_per_min;
  std::optional<double> growth_mib;  // the fitted slope over the span
  double threshold_mib_per_min = 0;
  bool growing = false;  // slope above the threshold, its 95% interval above 0, enough span
  std::string verdict;
};

// job: a user's own job, as mmprof ran and followed it.
struct JobFigures {  // NOLINT(bugprone-exception-escape)
  std::vector<std::string> command;
  int pid = 0;
  int exit_code = 0;
  std::optional<int> exit_signal;
  std::string exit, stopped_by, ended;  // how it exited; why it stopped; the two in a sentence
  // steps: warm-up and measured steps asked, measured; why fewer were (empty: null).
  int64_t warmup_asked = 0;
  std::optional<int64_t> steps_asked;
  int64_t steps_measured = 0;
  std::string short_why;
  bool forced = false;  // killed at the end: records of its last moments may be lost
  std::vector<std::string> killed_at_end;
  nlohmann::json exception;  // the exception that ended it (the hook's record); null: none
  std::vector<StuckFetch> stuck;
  HookStatus hook;
  DigestCost digests;
  JobDataLoaders dataloader;
  std::vector<CowGrowth> cow;
  std::vector<std::string> unavailable;  // what mmprof could not measure, with why
  // The timeline: each main process's loader choice and its rank's figures, the ranks compared,
  // the rank whose figures are the run's (primary), warnings.
  std::vector<LoaderChoice> loaders;
  std::vector<JobRank> ranks;
  std::optional<int> primary_pid, primary_rank;
  std::string primary_why;
  RankComparison rank_comparison;
  std::vector<std::string> warnings;

  // The rank whose main process is `process` (a pid), or null.
  const JobRank* rank_of(int process) const;
};

}  // namespace mmprof
