#pragma once
// A user's job's timeline from the hook's records (docs/external-hook.md): pure functions of
// HookRecords. Per main process (= per rank) its followed loader and timeline
// (external/loader_choice.hpp, external/rank_timeline.hpp); across ranks: the slowest rank and
// the spread, the rank that stands for the job; the job's configuration and the hook's status.
// Each result has figures(): its part of summary.json's job (mmprof/summary_job.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "external/hook_records.hpp"
#include "external/loader_choice.hpp"
#include "external/rank_timeline.hpp"
#include "mmprof/summary_job.hpp"

namespace mmprof::external {

// The ranks side by side (RankComparison, mmprof/summary_job.hpp).
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
  // Its part of summary.json's job: loaders, ranks, primary_*, rank_comparison, warnings.
  void figures(JobFigures& job) const;
};
JobTimeline job_timeline(const HookRecords& records, const TimelineOptions& options = {});

// "ok"; "partial (torch V): <what> (<why>): not measured: <figures>; ..." when the hook could not
// wrap part of this torch (`partial` records); or "unavailable: <reason>" without any record (the
// job's Python never imported torch or built no DataLoader, or the hook was not loaded) or with
// only `error` records (the first one's message).
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
  JobDataLoaders figures() const;  // summary.json's job.dataloader, the manifest's too
};
JobDescription describe_job(const HookRecords& records, const std::vector<LoaderChoice>& choices);

}  // namespace mmprof::external
