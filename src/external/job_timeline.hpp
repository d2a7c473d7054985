#pragma once
// A user's job's timeline from the hook's records (docs/external-hook.md): pure functions of
// HookRecords. Per main process (= per rank) its followed loader and timeline
// (external/loader_choice.hpp, external/rank_timeline.hpp); across ranks: the slowest rank and
// the spread, the rank that stands for the job; the job's configuration and the hook's status.
// Each result has to_json(): a summary.json block.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "external/hook_records.hpp"
#include "external/loader_choice.hpp"
#include "external/rank_timeline.hpp"

namespace mmprof::external {

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
  // measure/job_summary's straggler_analysis over the ranks' common steps (null with one rank): a
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

}  // namespace mmprof::external
