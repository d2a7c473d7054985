#pragma once
// Multi-rank baselines (docs/distributed.md). Under torchrun (RANK, WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT set) each mmprof process is one rank: it joins c10d's process group, checks that
// every rank runs the same configuration on the same dataset, writes JOB/rank-K, and rank 0
// merges JOB/job.json. `mmprof baseline --nproc-per-node N` starts N such ranks itself on this
// host, with torchrun's environment, and merges the job once they all ended (also after one
// failed or hung).
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "session/baseline.hpp"

namespace mmprof {
class DistGroup;
}

namespace mmprof::session {

// `--nproc-per-node N`: runs `args` (the whole command line) again N times as ranks 0..N-1,
// waits for them and merges the job (also after one failed or hung). The outcome's exit code is
// 0, or the first failed rank's.
BaselineOutcome launch_ranks(const BaselineRequest& request, const std::vector<std::string>& args,
                             const std::string& command);

// This process as one rank of a job: the joined group, and where its run directory goes.
struct RankJob {
  std::unique_ptr<DistGroup> group;
  std::filesystem::path job;  // the job directory, the same on every rank (rank 0's choice)
  std::filesystem::path out;  // JOB/rank-K
  ~RankJob();
  RankJob();
  RankJob(RankJob&&) noexcept;
};

// Joins the process group from torchrun's environment (blocking until every rank joined),
// refuses ranks whose configuration (`tree` without dist.rank) or dataset differs from rank 0's
// (UsageError naming the rank and the first difference), and agrees on the job directory:
// `requested` (--out) or rank 0's default.
RankJob join_job(const Config& config, const nlohmann::json& tree, uint64_t dataset_fingerprint,
                 const std::filesystem::path& requested);

// After this rank's run (`ok`: it succeeded): a last barrier, so rank 0 merges only once every
// rank has written, then rank 0 merges JOB/job.json. Returns job.json on rank 0, null elsewhere.
nlohmann::json finish_job(RankJob& job, bool ok);

}  // namespace mmprof::session
