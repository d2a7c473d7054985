#pragma once
// The job view of a multi-rank run: each rank wrote its own run directory (JOB/rank-K); this
// merges them into JOB/job.json ("mmprof.job/1"): per-rank throughput, stall, step tails and
// sync wait, the slowest rank of each step and overall, the spread, and what made the slow rank
// slow. Re-run at any time from the rank directories (mmprof report does), so a job cut short
// still merges what its ranks kept.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/summary_loading.hpp"

namespace mmprof {

// JOB/rank-K.
std::filesystem::path rank_dir(const std::filesystem::path& job, int rank);
// Whether `dir` is a job directory (a job.json, or a rank-0 run directory).
bool is_job_dir(const std::filesystem::path& dir);

// How a rank's process ended, as its launcher (mmprof baseline --nproc-per-node) saw it.
struct RankExit {
  int code = 0;        // the exit code, or 128 + the signal
  std::string how;     // "exit 1", "killed by signal 9 (Killed)"
  bool first = false;  // the first rank of the job to fail
};

// One rank's measured steps (one phase), for the straggler analysis.
struct RankSteps {
  int rank = 0;
  std::vector<double> step_ms, wait_ms, compute_ms;
  std::vector<double> sync_ms;  // empty without dist.sync
};

// Which rank the others waited for: per step, the rank whose time before its sync (step_ms -
// sync_ms) was the longest; overall, the rank with the longest mean such time; the spread is that
// mean's max over its median across ranks. Pure, unit-tested. Steps beyond the shortest rank's
// count are left out.
nlohmann::json straggler_analysis(const std::vector<RankSteps>& ranks);

// The ranks' samples and batches (their steps) per epoch as each rank's sampler planned them
// (`by_rank`: rank -> its summary's dist.epochs), compared epoch by
// epoch over the epochs every rank lists: the ranks of one DDP job must take equal steps in each
// epoch, or the one that runs out first starts its next epoch early, or leaves its peers waiting
// in a collective (a hang, or an epoch cut short). Null when no rank lists an epoch. Pure,
// unit-tested.
nlohmann::json epoch_balance(const std::map<int, std::vector<PlannedEpoch>>& by_rank);

// For a data straggler (`slow`, established): whether re-sharding can even its work, from the
// ranks' bytes per sample, the run's `data` config (path, layout) and the data's shards.json
// (`shards`; null when it has none). Only streamed shards (tar_stream) are a rank's own: in the
// other layouts every rank draws from one permutation of the dataset and re-sharding changes
// nothing; shards balanced by bytes already are not re-sharded by bytes again. Pure,
// unit-tested.
nlohmann::json reshard_advice(const nlohmann::json& ranks, int slow, const nlohmann::json& data,
                              const nlohmann::json& shards);

// Reads JOB/rank-0 .. rank-(world_size-1), writes JOB/job.json atomically and returns it. A rank
// without a run directory is listed as missing; `exits` adds how each ended (when empty: what an
// earlier merge of the same job recorded, so mmprof report JOB keeps the launcher's view).
nlohmann::json merge_job(const std::filesystem::path& job, int world_size,
                         const std::map<int, RankExit>& exits);

// The number of ranks of the job in `dir`: job.json's world_size, else the rank-K directories.
int job_world_size(const std::filesystem::path& dir);

}  // namespace mmprof
