// The speed levers of docs/performance.md that mmprof ab measures: each must leave the batches'
// content alone (or, for another resize filter, change it within a bound) and must actually do
// what it says (fresh pages, pinned CPUs, a hugetlbfs ring or a clear refusal).
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "integration/loader_fixture.hpp"
#include "mmprof/error.hpp"
#include "probe/procfs.hpp"

namespace mmprof::test {
namespace {

int64_t sum_from(const std::vector<int64_t>& v, size_t first) {
  return std::accumulate(v.begin() + static_cast<long>(first), v.end(), int64_t{0});
}

// Without reuse every sample of the second (warm) epoch faults in fresh pages: its slot's tensor
// pages were discarded and its worker's buffers trimmed. With reuse a warm epoch barely faults.
TEST(SpeedLevers, BufferReuseOffKeepsContentAndFaultsInFreshPages) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.loader.num_workers = 1;
  c.image.size = 64;
  c.image.dtype = ImageDType::float32;  // 48 KiB per image row: 12 pages
  const Delivered reused = drain(c, ds, 2);
  c.loader.buffer_reuse = false;
  const Delivered fresh = drain(c, ds, 2);
  EXPECT_EQ(fresh.indices, reused.indices);
  EXPECT_EQ(fresh.digests, reused.digests);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "fault counts describe glibc's allocator; a sanitizer's (quarantine, shadow "
                  "memory) faults on its own";
#endif
  const size_t n = ds.size();
  const int64_t warm_fresh = sum_from(fresh.minflt, n), warm_reused = sum_from(reused.minflt, n);
  EXPECT_GE(warm_fresh, static_cast<int64_t>(12 * n)) << warm_reused;
  EXPECT_LT(warm_reused * 4, warm_fresh);
}

std::string cpus_allowed(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", 18));
  }
  return "";
}

TEST(SpeedLevers, PinnedWorkersRunOnOneCpuEachInTurn) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  c.loader.num_workers = 3;
  c.loader.pin_workers = true;
  Loader loader(c, ds);
  // A worker pins itself before it fills its first batch: once each has delivered one, all are.
  std::set<int> delivered;
  for (int i = 0; i < 100 && delivered.size() < 3; ++i)
    delivered.insert(loader.next().worker);
  ASSERT_EQ(delivered.size(), 3u);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  const auto& pids = loader.stats().worker_pids;
  ASSERT_EQ(pids.size(), 3u);
  for (size_t i = 0; i < pids.size(); ++i) {
    EXPECT_EQ(cpus_allowed(pids[i]), std::to_string(cpus[i % cpus.size()])) << "worker " << i;
  }
  cpu_set_t main_after;
  ASSERT_EQ(sched_getaffinity(0, sizeof main_after, &main_after), 0);
  EXPECT_TRUE(CPU_EQUAL(&main_after, &allowed)) << "the main process must stay unpinned";
}

TEST(SpeedLevers, PinnedThreadWorkersDeliverTheSameBatches) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  const Delivered reference = drain(c, ds, 1);
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  c.loader.worker_mode = WorkerMode::thread;
  c.loader.pin_workers = true;
  const Delivered pinned = drain(c, ds, 1);
  EXPECT_EQ(pinned.digests, reference.digests);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &before))
      << "pinning a worker thread must leave main's thread alone";
}

// The hugetlbfs pool is the machine's: with enough free huge pages the ring comes from it and
// batches are the same; without, the refusal shows the arithmetic and the sysctl that fixes it.
TEST(SpeedLevers, HugePageRingWorksOrIsRefusedWithThePoolArithmetic) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  const Delivered reference = drain(c, ds, 1);
  c.loader.huge_pages = true;
  try {
    const Delivered huge = drain(c, ds, 1);
    EXPECT_EQ(huge.digests, reference.digests);
    EXPECT_GT(procfs::ProcFs().meminfo().huge_pages_total.value_or(0), 0)
        << "a hugetlbfs ring was mapped with an empty pool";
  } catch (const RunError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("loader.huge_pages=true"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HugePages_Free"), std::string::npos) << msg;
    EXPECT_NE(msg.find("vm.nr_hugepages="), std::string::npos) << msg;
  }
}

// One epoch of the small configuration as `base` leaves it, then one after `lever`: the same
// samples in the same order either way (no lever changes what is read). Returns both runs.
template <typename Base, typename Lever>
std::pair<Delivered, Delivered> drain_before_after(Base base, Lever lever) {
  const Dataset ds = files_dataset();
  Config c = small_config();
  base(c);
  Delivered before = drain(c, ds, 1);
  lever(c);
  Delivered after = drain(c, ds, 1);
  EXPECT_EQ(after.indices, before.indices);
  return {std::move(before), std::move(after)};
}

void defaults(Config&) {}

TEST(SpeedLevers, SwscaleResizerChangesPixelsButNotTheSamples) {
  const auto [reference, sws] =
      drain_before_after(defaults, [](Config& c) { c.image.resizer = ImageResizer::swscale; });
  EXPECT_NE(sws.digests, reference.digests);
}

// The AVX2 resize through the whole loader: every batch as the portable loop makes it (on a CPU
// without AVX2 both runs are the portable loop; transform_test.cpp compares the kernels).
TEST(SpeedLevers, SimdResizeKeepsEveryBatch) {
  const auto [portable, simd] = drain_before_after([](Config& c) { c.image.simd = false; },
                                                   [](Config& c) { c.image.simd = true; });
  EXPECT_EQ(simd.digests, portable.digests);
}

// Any n/8 against halves only: a crop of 100 pixels is decoded at 3/8 against 1/2 for a 32-pixel
// output, so pixels change; the samples do not.
TEST(SpeedLevers, DctScalesChangePixelsButNotTheSamples) {
  const auto [halves, eighths] =
      drain_before_after(defaults, [](Config& c) { c.image.dct_scales = ImageDctScales::eighths; });
  EXPECT_NE(eighths.digests, halves.digests);
}

}  // namespace
}  // namespace mmprof::test
