// procfs parsers on copied fixture files (tests/fixtures/procfs/README.md), including kernels
// that lack fields, and ProcFs over a fake root.
#include "probe/procfs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace mmprof::procfs {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  const auto bytes = test::read_bytes(test::source_dir() / "tests/fixtures/procfs" / name);
  return {bytes.begin(), bytes.end()};
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  test::write_bytes(path, {text.begin(), text.end()});
}

TEST(ProcfsParse, SmapsRollupOfARecentKernel) {
  const Smaps s = parse_smaps_rollup(fixture("smaps_rollup"));
  EXPECT_EQ(s.rss_kb, 2232);
  EXPECT_EQ(s.pss_kb, 493);
  EXPECT_EQ(s.pss_anon_kb, 160);
  EXPECT_EQ(s.pss_file_kb, 333);
  EXPECT_EQ(s.pss_shmem_kb, 0);
  EXPECT_EQ(s.shared_clean_kb, 1912);
  EXPECT_EQ(s.shared_dirty_kb, 0);
  EXPECT_EQ(s.private_clean_kb, 160);
  EXPECT_EQ(s.private_dirty_kb, 160);
  EXPECT_EQ(s.uss_kb(), 320);
  EXPECT_EQ(s.swap_kb, 0);
  EXPECT_EQ(s.swap_pss_kb, 0);
}

TEST(ProcfsParse, SmapsRollupBeforeLinux51HasNoPssSplit) {
  const Smaps s = parse_smaps_rollup(fixture("smaps_rollup.linux-4.14"));
  EXPECT_EQ(s.rss_kb, 2232);
  EXPECT_EQ(s.pss_kb, 493);
  EXPECT_FALSE(s.pss_anon_kb.has_value());
  EXPECT_FALSE(s.pss_file_kb.has_value());
  EXPECT_FALSE(s.pss_shmem_kb.has_value());
  EXPECT_FALSE(s.swap_pss_kb.has_value());
  EXPECT_EQ(s.swap_kb, 0);
  EXPECT_EQ(s.uss_kb(), 320);
}

TEST(ProcfsParse, UssIsEmptyNotZeroWithoutPrivateFields) {
  const Smaps s = parse_smaps_rollup(fixture("smaps_rollup.no-private"));
  EXPECT_EQ(s.rss_kb, 2232);
  EXPECT_FALSE(s.uss_kb().has_value());
  EXPECT_FALSE(s.swap_kb.has_value());
}

TEST(ProcfsParse, StatOfARealProcess) {
  const auto st = parse_stat(fixture("stat"));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 10448);
  EXPECT_EQ(st->comm, "cp");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 10444);
  EXPECT_EQ(st->minflt, 132u);
  EXPECT_EQ(st->majflt, 0u);
  EXPECT_EQ(st->starttime_ticks, 355513u);
}

TEST(ProcfsParse, StatCommMayHoldSpacesAndParentheses) {
  const auto st = parse_stat(fixture("stat.weird-comm"));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "a) b (c)");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 1);
  EXPECT_EQ(st->minflt, 1234u);
  EXPECT_EQ(st->majflt, 7u);
  EXPECT_EQ(st->utime_ticks, 250u);
  EXPECT_EQ(st->stime_ticks, 50u);
  EXPECT_EQ(st->starttime_ticks, 99999u);
}

TEST(ProcfsParse, MalformedStatIsEmpty) {
  EXPECT_FALSE(parse_stat("").has_value());
  EXPECT_FALSE(parse_stat("12 (x) R 1 2 3").has_value());
  EXPECT_FALSE(parse_stat("12 x R 1").has_value());
}

TEST(ProcfsParse, Io) {
  const ProcIo io = parse_io(fixture("io"));
  EXPECT_EQ(io.rchar, 10668u);
  EXPECT_EQ(io.wchar, 0u);
  EXPECT_EQ(io.syscr, 16u);
  EXPECT_EQ(io.syscw, 0u);
  EXPECT_EQ(io.read_bytes, 0u);
  EXPECT_EQ(io.write_bytes, 4096u);
}

TEST(ProcfsParse, IoWithoutTaskIoAccountingHasNoByteCounts) {
  const ProcIo io = parse_io(fixture("io.no-task-io-accounting"));
  EXPECT_EQ(io.rchar, 10668u);
  EXPECT_FALSE(io.read_bytes.has_value());
  EXPECT_FALSE(io.write_bytes.has_value());
}

TEST(ProcfsParse, Meminfo) {
  const MemInfo m = parse_meminfo(fixture("meminfo"));
  EXPECT_EQ(m.mem_total_kb, 24684084);
  EXPECT_EQ(m.mem_available_kb, 22568592);
  EXPECT_EQ(m.cached_kb, 2383460);  // "Cached", not "SwapCached"
  EXPECT_EQ(m.shmem_kb, 166552);
  const MemInfo old = parse_meminfo(fixture("meminfo.linux-3.10"));
  EXPECT_EQ(old.mem_total_kb, 24684084);
  EXPECT_FALSE(old.mem_available_kb.has_value());
}

TEST(ProcfsParse, CgroupV2PathAndCpuMax) {
  EXPECT_EQ(parse_cgroup_v2_path(fixture("cgroup.v2")), "/user.slice/mmprof-test.scope");
  EXPECT_EQ(parse_cgroup_v2_path(fixture("cgroup.v1-hybrid")), "/");
  EXPECT_FALSE(parse_cgroup_v2_path("4:memory:/a\n3:cpu:/\n").has_value());
  EXPECT_EQ(parse_cpu_max(fixture("cpu.max")), 2.0);
  EXPECT_FALSE(parse_cpu_max(fixture("cpu.max.unlimited")).has_value());
  EXPECT_EQ(parse_cpu_max("150000 100000\n"), 1.5);
  EXPECT_FALSE(parse_cpu_max("garbage").has_value());
}

TEST(ProcfsParse, TheTreeFollowsParentLinks) {
  std::vector<ProcStat> all(5);
  const int pid[] = {1, 10, 11, 12, 20}, ppid[] = {0, 1, 10, 11, 1};
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].pid = pid[i];
    all[i].ppid = ppid[i];
  }
  std::vector<int> found;
  for (const auto* p : descendants(all, 10))
    found.push_back(p->pid);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<int>{11, 12}));
  EXPECT_TRUE(descendants(all, 12).empty());
}

// A fake root with one process (pid 100) and a cgroup v2 group.
class FakeProcfs : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path proc = dir_.path() / "proc";
    write_text(proc / "100" / "stat", fixture("stat.weird-comm").replace(0, 4, "100 "));
    write_text(proc / "100" / "smaps_rollup", fixture("smaps_rollup"));
    write_text(proc / "100" / "io", fixture("io"));
    write_text(proc / "meminfo", fixture("meminfo"));
    write_text(proc / "self" / "cgroup", fixture("cgroup.v2"));
    const fs::path group = dir_.path() / "cgroup" / "user.slice" / "mmprof-test.scope";
    write_text(group / "cgroup.controllers", "cpu memory\n");
    write_text(group / "cpu.max", fixture("cpu.max"));
    write_text(group / "memory.current", fixture("memory.current"));
    write_text(group / "memory.peak", fixture("memory.peak"));
    fs::create_directories(dir_.path() / "shm");
  }
  ProcFs procfs() const {
    return ProcFs(Roots{dir_.path() / "proc", dir_.path() / "cgroup", dir_.path() / "shm"});
  }
  test::TempDir dir_;
};

TEST_F(FakeProcfs, ReadsAProcess) {
  const ProcFs p = procfs();
  const auto st = p.stat(100);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 100);
  EXPECT_EQ(p.smaps(100)->pss_kb, 493);
  EXPECT_EQ(p.io(100)->rchar, 10668u);
  const auto all = p.all_processes();
  ASSERT_EQ(all.size(), 1u);  // "self" and "meminfo" are not processes
  EXPECT_EQ(all[0].pid, 100);
}

TEST_F(FakeProcfs, AGoneProcessOrAnUnreadableFileIsEmptyNotAnError) {
  const ProcFs p = procfs();
  EXPECT_FALSE(p.stat(999).has_value());
  EXPECT_FALSE(p.smaps(999).has_value());
  fs::remove(dir_.path() / "proc" / "100" / "io");
  EXPECT_FALSE(p.io(100).has_value());
}

TEST_F(FakeProcfs, CgroupV2FilesAndMeminfo) {
  const ProcFs p = procfs();
  const Cgroup cg = p.cgroup();
  ASSERT_TRUE(cg.dir.has_value());
  EXPECT_EQ(cg.cpu_quota_cores, 2.0);
  EXPECT_EQ(cg.memory_current_bytes, 536870912);
  EXPECT_EQ(cg.memory_peak_bytes, 805306368);
  EXPECT_EQ(p.meminfo().mem_total_kb, 24684084);
  EXPECT_TRUE(p.shm().total_bytes.has_value());
}

TEST_F(FakeProcfs, MemoryPeakIsEmptyOnKernelsWithoutIt) {
  fs::remove(dir_.path() / "cgroup" / "user.slice" / "mmprof-test.scope" / "memory.peak");
  const Cgroup cg = procfs().cgroup();
  EXPECT_EQ(cg.memory_current_bytes, 536870912);
  EXPECT_FALSE(cg.memory_peak_bytes.has_value());
}

TEST_F(FakeProcfs, NoCgroupV2GroupGivesNothing) {
  write_text(dir_.path() / "proc" / "self" / "cgroup", "4:memory:/x\n");
  const Cgroup cg = procfs().cgroup();
  EXPECT_FALSE(cg.dir.has_value());
  EXPECT_FALSE(cg.memory_current_bytes.has_value());
  EXPECT_FALSE(cg.cpu_quota_cores.has_value());
}

}  // namespace
}  // namespace mmprof::procfs
