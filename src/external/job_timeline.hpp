#pragma once
// A user's job's timeline from the hook's records (docs/external-hook.md): pure functions of
// HookRecords. Per main process (= per rank): which loader to follow, its steps (one iteration
// of the training loop: from a `__next__` call of that loader to its next call), epoch gaps and
// the epoch-boundary wait, per-sample and per-batch stage times, per-worker load; across ranks:
// the slowest rank and the spread; the job's configuration and the hook's status; and the
// copy-on-write growth test of a worker's USS. Each result has to_json(): a summary.json block
// (snake_case keys, units in the names, null for what was not measured).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "external/hook_records.hpp"
#include "mmprof/run_dir.hpp"
#include "run/worker_balance.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::external {

struct TimelineOptions {
  // --loader SELECT (as MMPROF_HOOK_LOADER): an integer is the construction order in the process
  // (from 0), anything else a dataset class name. Empty: the loader that returned most batches.
  std::string loader;
  int64_t warmup_steps = 0;          // the first N batches of the followed loader are warm-up
  std::optional<int64_t> max_steps;  // at most this many measured steps (after warm-up)
};

// A main process of the job: a `main` section of a hook file that did not become a worker later
// (a spawn child re-running the script records as main first).
struct MainProcess {
  int pid = 0;
  int section = -1;
  std::optional<int> rank;
};
// In rank order (processes without a rank last, by pid).
std::vector<MainProcess> main_processes(const HookRecords& records);

struct LoaderSummary {
  int loader = 0;
  std::string origin, dataset;
  std::optional<int> num_workers;
  std::optional<int64_t> batch_size;
  int64_t batches = 0, epochs = 0;
  bool follow = false;  // MMPROF_HOOK_MAX_BATCHES applied to it
  nlohmann::json to_json() const;
};

// Which loader of one main process is followed, and why.
struct LoaderChoice {
  int pid = 0;
  std::optional<int> rank;
  std::vector<LoaderSummary> loaders;  // by id
  std::optional<int> chosen;           // empty: none matched --loader, or none returned a batch
  std::string reason;
  nlohmann::json to_json() const;
};
LoaderChoice choose_loader(const HookRecords& records, const MainProcess& process,
                           const std::string& select);

// The gaps between epochs of the followed loader: from an epoch_end to the next epoch's first
// call (validation, iterator re-creation). They are not steps.
struct EpochGaps {
  std::vector<double> gaps_ms;
  std::vector<double> iterator_start_ms;  // per epoch record: `__iter__` entry to its return
  nlohmann::json to_json() const;         // count, mean_ms, max_ms, total_ms, iterator_start_ms
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
  nlohmann::json to_json() const;
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
  nlohmann::json to_json() const;
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
  nlohmann::json to_json() const;
};

RankTimeline rank_timeline(const HookRecords& records, const MainProcess& process,
                           const LoaderChoice& choice, const TimelineOptions& options);

struct RankComparison {
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
  // run/job_summary's straggler_analysis over the ranks' common steps (null with one rank): a
  // straggler is established only by its one-sided test and spread floor.
  nlohmann::json straggler;
  nlohmann::json to_json() const;
};
RankComparison compare_ranks(const std::vector<RankTimeline>& ranks);

struct JobTimeline {
  std::vector<LoaderChoice> loaders;  // per main process
  std::vector<RankTimeline> ranks;    // same order
  RankComparison comparison;
  std::optional<int> straggler_rank;  // comparison.straggler's rank when it is established
  std::vector<std::string> warnings;  // e.g. --loader matched no loader of any process
  // The rank whose figures stand for the job: an established straggler (under synchronous data
  // parallelism every rank steps at its pace, so its wait is the job's limit, issue 32 case 12),
  // else rank 0 (or the first main process that measured steps).
  const RankTimeline* primary() const noexcept;
  // Why primary() is that rank, as a sentence ("" with one process).
  std::string primary_why() const;
  nlohmann::json to_json() const;  // {loaders, ranks, rank_comparison, warnings}
};
JobTimeline job_timeline(const HookRecords& records, const TimelineOptions& options = {});

// "ok"; "partial (torch V): <what> (<why>): not measured: <figures>; ..." when the hook could not
// wrap part of this torch (`partial` records); or "unavailable: <reason>" without any record (the
// job's Python never imported torch or built no DataLoader, or the hook was not loaded) or with
// only `error` records (the first one's message).
struct HookStatus {
  std::string status;
  int64_t files = 0, lines = 0, cut_lines = 0, unknown_records = 0;
  std::vector<ErrorRecord> errors;
  std::vector<PartialRecord> partial;  // one per torch name the hook could not wrap
  bool ok() const noexcept { return status == "ok"; }
  nlohmann::json to_json() const;
};
HookStatus hook_status(const HookRecords& records);

// The job as the hook saw it, for the manifest and the summary: hook status, versions, every
// loader's configuration and overrides (applied, rejected) and which one is followed.
struct JobDescription {
  HookStatus hook;
  std::optional<VersionsRecord> versions;  // the first main process's
  bool versions_differ = false;            // another main process reported other versions
  struct Loader {
    int pid = 0;
    std::optional<int> rank;
    bool followed = false;
    LoaderRecord record;
  };
  std::vector<Loader> loaders;
  nlohmann::json to_json() const;
};
JobDescription describe_job(const HookRecords& records, const std::vector<LoaderChoice>& choices);

// Copy-on-write growth (PyTorch issue #13246): a worker that reads a dataset held as Python
// objects touches their refcounts, so the pages it shares with the main process after fork are
// copied one by one and its USS grows through the epoch.
struct UssPoint {
  int64_t t_ns = 0;
  int64_t uss_kb = 0;
};
// The USS samples of `pid` in [t_begin_ns, t_end_ns] (resources.csv rows; rows without USS left
// out), in time order.
std::vector<UssPoint> uss_series(const std::vector<ResourceRow>& rows, int pid, int64_t t_begin_ns,
                                 int64_t t_end_ns);

// 10 MiB/min is 600 MiB an hour per worker: with 8 workers on each of 8 ranks, ~38 GiB an hour of a
// node's memory, the pace at which #13246's reports end in the OOM killer. Healthy workers are
// flat after warm-up (batches go through shared memory, the allocator reuses its arenas), within
// a few MiB/min.
inline constexpr double kCowThresholdMibPerMin = 10.0;
// Growth is flagged only over at least this many samples and seconds: a shorter series cannot
// tell a slope from the jitter of a few batches in flight.
inline constexpr size_t kCowMinPoints = 5;
inline constexpr double kCowMinSpanS = 30.0;

struct CowGrowth {
  int pid = 0;
  size_t points = 0;
  double span_s = 0;
  std::optional<double> slope_mib_per_min;  // least squares, MiB
  std::optional<double> slope_ci95_low_mib_per_min, slope_ci95_high_mib_per_min;
  std::optional<double> growth_mib;  // the fitted slope over the span
  double threshold_mib_per_min = kCowThresholdMibPerMin;
  // slope above the threshold, its 95% interval above 0, enough points and span.
  bool growing = false;
  std::string verdict;
  nlohmann::json to_json() const;
};
CowGrowth cow_growth(int pid, const std::vector<UssPoint>& series,
                     double threshold_mib_per_min = kCowThresholdMibPerMin);

}  // namespace mmprof::external
