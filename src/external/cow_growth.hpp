#pragma once
// Copy-on-write growth of a job's DataLoader workers, from their USS samples (resources.csv).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "mmprof/summary_job.hpp"

namespace mmprof::external {

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

// The verdict over one worker's series (CowGrowth: summary.json's job.cow[],
// mmprof/summary_job.hpp).
CowGrowth cow_growth(int pid, const std::vector<UssPoint>& series,
                     double threshold_mib_per_min = kCowThresholdMibPerMin);

}  // namespace mmprof::external
