// procfs parsers on copied fixture files (tests/fixtures/procfs/README.md), including kernels
// that lack fields, and ProcFs over a fake root.
#include "probe/procfs.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

// /proc/stat of a 2-CPU host: the "cpu" line is all of them, then one line per CPU.
TEST(ProcfsParse, CpuTimesOfARecentKernel) {
  const auto t = parse_cpu_times(fixture("proc-stat"));
  ASSERT_EQ(t.size(), 3u);  // cpu, cpu0, cpu1; intr, ctxt, ... are not CPU lines
  const CpuTimes& all = t.at(-1);
  EXPECT_EQ(all.user, 13586u);
  EXPECT_EQ(all.nice, 53250u);
  EXPECT_EQ(all.system, 23883u);
  EXPECT_EQ(all.idle, 22826u);
  EXPECT_EQ(all.iowait, 884u);
  EXPECT_EQ(all.softirq, 528u);
  EXPECT_TRUE(all.has_steal());
  EXPECT_EQ(all.busy(), 13586u + 53250 + 23883 + 0 + 528);
  // The kernel converts each line from nanoseconds on its own: the sum agrees within a few ticks.
  CpuTimes sum = t.at(0);
  sum += t.at(1);
  EXPECT_NEAR(static_cast<double>(sum.busy()), static_cast<double>(all.busy()), 4);
  EXPECT_NEAR(static_cast<double>(sum.total()), static_cast<double>(all.total()), 8);
  EXPECT_EQ(t.at(1).user, 8681u);
}

TEST(ProcfsParse, CpuTimesBeforeStealTimeHaveNoSteal) {
  const auto t = parse_cpu_times(fixture("proc-stat.no-steal"));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at(-1).fields, 7);
  EXPECT_TRUE(t.at(-1).has_iowait());
  EXPECT_FALSE(t.at(-1).has_steal());
  EXPECT_EQ(t.at(0).busy(), 600u + 10 + 200 + 0 + 5);
  EXPECT_TRUE(parse_cpu_times("cpu 1 2\ncpux 1 2 3 4\n").empty());
}

TEST(ProcfsParse, SchedstatIsRunWaitAndSlices) {
  const auto s = parse_schedstat(fixture("schedstat"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->run_ns, 6871292u);
  EXPECT_EQ(s->wait_ns, 6444592u);
  EXPECT_EQ(s->timeslices, 2u);
  EXPECT_FALSE(parse_schedstat("1 2\n").has_value());
  EXPECT_FALSE(parse_schedstat("1 x 3\n").has_value());
}

TEST(ProcfsParse, CpuPressureWithAndWithoutTheFullLine) {
  const auto p = parse_pressure(fixture("pressure-cpu"));
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->some_avg10_pct.value_or(-1), 16.49);
  EXPECT_EQ(p->some_total_us, 68758596u);
  EXPECT_EQ(p->full_total_us, 0u);
  // Before Linux 5.13 the cpu file has no "full" line: absent, not 0.
  const auto old = parse_pressure(fixture("pressure-cpu.linux-5.10"));
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->some_total_us, 987654u);
  EXPECT_FALSE(old->full_total_us.has_value());
  EXPECT_FALSE(parse_pressure("").has_value());
}

TEST(ProcfsParse, StatHasTheThreadCount) {
  EXPECT_EQ(parse_stat(fixture("stat"))->num_threads, 1);
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

TEST_F(FakeProcfs, SchedstatSumsTheThreadsAndHostCpuFilesAreOptional) {
  const ProcFs p = procfs();
  const fs::path proc = dir_.path() / "proc";
  write_text(proc / "100" / "schedstat", "10 20 1\n");
  write_text(proc / "100" / "task" / "100" / "schedstat", "10 20 1\n");
  write_text(proc / "100" / "task" / "101" / "schedstat", "5 300 4\n");
  EXPECT_EQ(p.schedstat(100, 1)->wait_ns, 20u);  // one thread: its own file
  const auto both = p.schedstat(100, 2);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->run_ns, 15u);
  EXPECT_EQ(both->wait_ns, 320u);
  EXPECT_EQ(both->timeslices, 5u);
  EXPECT_FALSE(p.schedstat(999, 1).has_value());
  // No /proc/stat or PSI under this root: empty, not zeros.
  EXPECT_TRUE(p.cpu_times().empty());
  EXPECT_FALSE(p.cpu_pressure().has_value());
  write_text(proc / "stat", fixture("proc-stat"));
  write_text(proc / "pressure" / "cpu", fixture("pressure-cpu"));
  EXPECT_EQ(p.cpu_times().size(), 3u);
  EXPECT_EQ(p.cpu_pressure()->some_total_us, 68758596u);
}

TEST_F(FakeProcfs, NoCgroupV2GroupGivesNothing) {
  write_text(dir_.path() / "proc" / "self" / "cgroup", "4:memory:/x\n");
  const Cgroup cg = procfs().cgroup();
  EXPECT_FALSE(cg.dir.has_value());
  EXPECT_FALSE(cg.memory_current_bytes.has_value());
  EXPECT_FALSE(cg.cpu_quota_cores.has_value());
}

// Against the kernel: two processes spinning on one CPU are always runnable, so each one's time
// on the CPU plus its run-queue delay is the wall time from its fork to its stop, and its time on
// the CPU is what /proc/PID/stat counts (utime + stime, in clock ticks).
TEST(LiveProcfs, RunPlusRunQueueDelayOfAnAlwaysRunnableProcessIsItsWallTime) {
  const std::vector<int> cpus = affinity_cpu_ids();
  ASSERT_FALSE(cpus.empty());
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus.front(), &one);
  const auto now_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  struct Spinner {
    pid_t pid = 0;
    int64_t before_fork = 0, after_fork = 0, stop_sent = 0, stopped = 0;
    SchedStat sched;
    ProcStat stat;
  };
  std::vector<Spinner> spinners(2);
  for (Spinner& s : spinners) {
    s.before_fork = now_ns();
    s.pid = fork();
    ASSERT_GE(s.pid, 0);
    if (s.pid == 0) {
      sched_setaffinity(0, sizeof one, &one);
      volatile uint64_t n = 0;
      for (;;)
        n = n + 1;
    }
    s.after_fork = now_ns();
  }
  usleep(300'000);
  const ProcFs p;
  for (Spinner& s : spinners) {
    // Stopped, it leaves the run queue: the kernel adds its last wait and run to the counters.
    s.stop_sent = now_ns();
    kill(s.pid, SIGSTOP);
    for (int i = 0; i < 2000 && p.stat(s.pid).value_or(ProcStat{}).state != 'T'; ++i)
      usleep(500);
    s.stopped = now_ns();
    s.sched = p.schedstat(s.pid, 1).value_or(SchedStat{});
    s.stat = p.stat(s.pid).value_or(ProcStat{});
  }
  for (const Spinner& s : spinners) {
    kill(s.pid, SIGKILL);
    waitpid(s.pid, nullptr, 0);
  }
  for (const Spinner& s : spinners) {
    ASSERT_EQ(s.stat.state, 'T');
    const double run_s = static_cast<double>(s.sched.run_ns) / 1e9;
    const double wait_s = static_cast<double>(s.sched.wait_ns) / 1e9;
    const double low = static_cast<double>(s.stop_sent - s.after_fork) / 1e9;
    const double high = static_cast<double>(s.stopped - s.before_fork) / 1e9;
    EXPECT_GE(run_s + wait_s, low - 0.005) << run_s << " + " << wait_s;
    EXPECT_LE(run_s + wait_s, high + 0.005) << run_s << " + " << wait_s;
    // Sharing one CPU with the other spinner, each waited at least a third of the time.
    EXPECT_GE(wait_s, low / 3) << wait_s << " of " << low;
    const double ticks_s =
        static_cast<double>(s.stat.utime_ticks + s.stat.stime_ticks) / clock_ticks_per_s();
    EXPECT_NEAR(ticks_s, run_s, 0.03 + 0.1 * run_s);
  }
}

}  // namespace
}  // namespace mmprof::procfs
