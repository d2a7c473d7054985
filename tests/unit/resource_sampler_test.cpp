// ResourceSampler over a fake procfs root with a fake clock: roles, the tree, processes that exit,
// recycled pids, windows, peaks and the CSV rows. No sleeps.
#include "probe/resource_sampler.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "rundir/resource_rows.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

class FakeClock final : public Clock {
 public:
  int64_t now_ns() override { return t; }
  int64_t t = 1'000'000'000;
};

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  test::write_bytes(path, {text.begin(), text.end()});
}

struct FakeProc {
  int pid, ppid;
  uint64_t utime = 0, stime = 0, minflt = 0, majflt = 0, starttime = 1000;
  int64_t rss_kb = 1000, pss_kb = 500, private_kb = 300;
  uint64_t rchar = 0, read_bytes = 0;
  char state = 'S';
};

class ResourceSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(proc() / "meminfo",
               "MemTotal: 1000000 kB\nMemFree: 10 kB\nMemAvailable: 600000 kB\nCached: 2000 kB\n"
               "Shmem: 300 kB\n");
    write_text(proc() / "self" / "cgroup", "0::/\n");
    fs::create_directories(dir_.path() / "shm");
    put({.pid = 100, .ppid = 1});
    put({.pid = 101, .ppid = 100});
    put({.pid = 102, .ppid = 101});
    put({.pid = 200, .ppid = 1});  // not ours
  }
  fs::path proc() const { return dir_.path() / "proc"; }
  void put(const FakeProc& p) {
    const fs::path d = proc() / std::to_string(p.pid);
    write_text(
        d / "stat",
        fmt::format("{} (proc {}) {} {} 1 1 0 -1 0 {} 0 {} 0 {} {} 0 0 20 0 1 0 {} 1 1 0\n", p.pid,
                    p.pid, p.state, p.ppid, p.minflt, p.majflt, p.utime, p.stime, p.starttime));
    if (p.state == 'Z') {
      write_text(d / "smaps_rollup", "");
    } else {
      write_text(d / "smaps_rollup",
                 fmt::format("Rss: {} kB\nPss: {} kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\n"
                             "Private_Clean: 0 kB\nPrivate_Dirty: {} kB\nSwap: 0 kB\n",
                             p.rss_kb, p.pss_kb, p.private_kb));
    }
    write_text(d / "io", fmt::format("rchar: {}\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: {}\n"
                                     "write_bytes: 0\n",
                                     p.rchar, p.read_bytes));
  }
  ResourceSampler make(std::string* csv = nullptr) {
    return ResourceSampler(procfs_, clock_, {0, 100}, [csv](const Snapshot& s) {
      if (csv != nullptr) *csv += resources_csv_rows(s);
    });
  }
  static const ProcessSample* find(const Snapshot& s, int pid) {
    for (const auto& p : s.processes) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  }

  test::TempDir dir_;
  procfs::ProcFs procfs_{
      procfs::Roots{dir_.path() / "proc", dir_.path() / "cgroup", dir_.path() / "shm"}};
  FakeClock clock_;
  const double tick_ = 1.0 / procfs::clock_ticks_per_s();
};

TEST_F(ResourceSamplerTest, SamplesTheTreeWithRoles) {
  auto sampler = make();
  sampler.set_workers({101});
  sampler.set_phase("pipeline");
  sampler.sample_now("x");
  const Snapshot s = sampler.last_snapshot();
  EXPECT_EQ(s.t_ns, clock_.t);
  EXPECT_EQ(s.phase, "pipeline");
  EXPECT_EQ(s.label, "x");
  ASSERT_EQ(s.processes.size(), 3u);
  EXPECT_EQ(find(s, 100)->role, "main");
  EXPECT_EQ(find(s, 101)->role, "worker");
  EXPECT_EQ(find(s, 101)->worker, 0);
  EXPECT_EQ(find(s, 102)->role, "external");  // a worker's child is still ours
  EXPECT_EQ(find(s, 102)->comm, "proc 102");
  EXPECT_EQ(find(s, 200), nullptr);
  EXPECT_EQ(find(s, 100)->mem.uss_kb(), 300);
  EXPECT_EQ(s.host.mem.mem_available_kb, 600000);
}

TEST_F(ResourceSamplerTest, CsvHasDesignColumnsFirstAndEmptyFieldsForMissingValues) {
  const std::string header = resources_csv_header();
  EXPECT_EQ(header.rfind("t_ns,pid,role,rss_kb,pss_kb,uss_kb,cpu_s,read_bytes,minflt,majflt,", 0),
            0u);
  std::string csv;
  auto sampler = make(&csv);
  FakeProc zombie{.pid = 102, .ppid = 101, .utime = 50};
  zombie.state = 'Z';
  put(zombie);
  fs::remove(proc() / "102" / "io");
  sampler.sample_now("");
  std::istringstream lines(csv);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','),
              std::count(header.begin(), header.end(), ','))
        << line;
    if (line.find(",102,") != std::string::npos) {
      // A zombie: no memory, no io, but its CPU time (0.5 s) is still there.
      EXPECT_NE(line.find(",102,external,,,,0.500,,0,0,"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(rows, 3);
  const std::string host = host_csv_row(sampler.last_snapshot());
  EXPECT_EQ(host.find(fmt::format("{},1000000,600000,400000,2000,300,,,", clock_.t)), 0u) << host;
}

TEST_F(ResourceSamplerTest, AProcessThatExitsBetweenSamplesIsSimplyGone) {
  auto sampler = make();
  sampler.sample_now("");
  EXPECT_EQ(sampler.last_snapshot().processes.size(), 3u);
  fs::remove_all(proc() / "102");
  clock_.t += 100'000'000;
  sampler.sample_now("");
  EXPECT_EQ(sampler.last_snapshot().processes.size(), 2u);
  // Its files vanishing after its stat was read (smaps, io) leave empty fields, not an error.
  fs::remove(proc() / "101" / "smaps_rollup");
  fs::remove(proc() / "101" / "io");
  sampler.sample_now("");
  const Snapshot snapshot = sampler.last_snapshot();  // find() points into it
  const ProcessSample* p = find(snapshot, 101);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->mem.rss_kb.has_value());
  EXPECT_FALSE(p->io.rchar.has_value());
  EXPECT_TRUE(sampler.usage().error.empty());
  EXPECT_EQ(sampler.usage().processes().size(), 3u);
}

TEST_F(ResourceSamplerTest, WindowsMeasureCpuIoAndFaultsBetweenTheirSamples) {
  auto sampler = make();
  sampler.set_workers({101});
  put({.pid = 100, .ppid = 1, .utime = 100, .minflt = 10, .rchar = 1000, .read_bytes = 4096});
  sampler.begin_window("pipeline");
  clock_.t += 2'000'000'000;  // 2 s
  put({.pid = 100,
       .ppid = 1,
       .utime = 250,
       .stime = 50,
       .minflt = 30,
       .rchar = 5000,
       .read_bytes = 8192});
  put({.pid = 101, .ppid = 100, .utime = 100, .minflt = 5, .rchar = 100});
  sampler.end_window("pipeline");
  const auto w = sampler.usage().window("pipeline");
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->closed);
  EXPECT_DOUBLE_EQ(w->wall_s(), 2.0);
  // main: 200 ticks more; worker 101 (in the first sample at 0): 100 ticks.
  EXPECT_NEAR(w->cpu_s(), 300 * tick_, 1e-9);
  EXPECT_EQ(w->minflt(), 25);
  EXPECT_EQ(w->io().rchar, 4100u);
  EXPECT_EQ(w->io().read_bytes, 4096u);
  // A process born inside the window counts from zero.
  put({.pid = 103, .ppid = 100, .utime = 40, .starttime = 2000});
  sampler.begin_window("later");
  put({.pid = 104, .ppid = 100, .utime = 40, .starttime = 2000});
  clock_.t += 1'000'000'000;
  sampler.end_window("later");
  const auto later = sampler.usage().window("later");
  ASSERT_TRUE(later.has_value());
  EXPECT_NEAR(later->cpu_s(), 40 * tick_, 1e-9);  // 104's 40 ticks; 103 was already there

  // A process that ends inside a window was seen over part of it only (observed_s): what it
  // used covers that part (a worker whose epoch was done), the rest of the window is not its.
  sampler.begin_window("ending");
  clock_.t += 500'000'000;
  sampler.sample_now("");
  fs::remove_all(proc() / "102");
  clock_.t += 1'500'000'000;
  sampler.end_window("ending");
  const auto ending = sampler.usage().window("ending");
  ASSERT_TRUE(ending.has_value());
  std::map<int, double> observed;
  for (const ProcessUse& p : ending->processes)
    observed[p.pid] = p.observed_s;
  EXPECT_DOUBLE_EQ(observed.at(100), 2.0);
  EXPECT_DOUBLE_EQ(observed.at(102), 0.5);
}

// /proc/stat lines of a 2-CPU host: CPU 1 at `busy` user ticks, `idle`, `iowait` and `steal`.
std::string proc_stat(uint64_t busy, uint64_t idle, uint64_t iowait, uint64_t steal) {
  return fmt::format(
      "cpu  {} 0 0 {} {} 0 0 {} 0 0\ncpu0 9999 0 0 9999 0 0 0 0 0 0\ncpu1 {} 0 0 {} {} 0 0 {} 0 "
      "0\nctxt 1\n",
      busy + 9999, idle + 9999, iowait, steal, busy, idle, iowait, steal);
}

TEST_F(ResourceSamplerTest, HostCpuPressureAndRunQueueDelayOverAWindow) {
  ResourceSampler::Options o;
  o.interval_ms = 0;
  o.root_pid = 100;
  o.host_cpus = {1};  // the run may use CPU 1 only: CPU 0's busy ticks are not its host
  std::string csv, host_csv;
  ResourceSampler sampler(procfs_, clock_, o, [&](const Snapshot& s) {
    csv += resources_csv_rows(s);
    host_csv += host_csv_row(s);
  });
  sampler.set_workers({101});
  write_text(proc() / "stat", proc_stat(1000, 500, 10, 0));
  write_text(proc() / "pressure" / "cpu", "some avg10=1.00 avg60=0 avg300=0 total=1000000\n");
  write_text(proc() / "100" / "schedstat", "900000000 50000000 10\n");
  write_text(proc() / "101" / "schedstat", "0 0 0\n");
  sampler.begin_window("pipeline");
  clock_.t += 2'000'000'000;
  // 2 s of CPU 1 at 100 ticks/s: 150 busy, 40 idle, 10 iowait; PSI 0.5 s; the worker waited 0.6 s.
  const double hz = procfs::clock_ticks_per_s();
  const auto ticks = [&](double share) { return static_cast<uint64_t>(share * 2 * hz); };
  write_text(proc() / "stat", proc_stat(1000 + ticks(0.75), 500 + ticks(0.2), 10 + ticks(0.05), 0));
  write_text(proc() / "pressure" / "cpu", "some avg10=1.00 avg60=0 avg300=0 total=1500000\n");
  write_text(proc() / "100" / "schedstat", "1900000000 150000000 20\n");
  write_text(proc() / "101" / "schedstat", "1400000000 600000000 30\n");
  sampler.end_window("pipeline");
  const auto w = sampler.usage().window("pipeline");
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(w->host_cpu.has_value());
  EXPECT_EQ(w->host_cpu->cpus, 1);
  EXPECT_NEAR(w->host_cpu->busy_s, 1.5, 1e-9);
  EXPECT_NEAR(w->host_cpu->idle_s, 0.4, 1e-9);
  EXPECT_NEAR(w->host_cpu->iowait_s.value_or(-1), 0.1, 1e-9);
  EXPECT_NEAR(w->host_cpu->steal_s.value_or(-1), 0.0, 1e-9);
  EXPECT_TRUE(w->pressure_read);
  EXPECT_NEAR(w->pressure_some_s.value_or(-1), 0.5, 1e-9);
  EXPECT_FALSE(w->pressure_full_s.has_value());  // no "full" line: not measured, not 0
  ASSERT_EQ(w->processes.size(), 3u);
  for (const ProcessUse& p : w->processes) {
    if (p.pid == 102) {
      EXPECT_FALSE(p.run_queue_delay_s.has_value());  // no schedstat file: not measured
      continue;
    }
    ASSERT_TRUE(p.run_queue_delay_s.has_value()) << p.pid;
    EXPECT_NEAR(*p.run_queue_delay_s, p.pid == 100 ? 0.1 : 0.6, 1e-9) << p.pid;
  }
  // The CSVs carry the cumulative counters.
  EXPECT_NE(csv.find(",600000000\n"), std::string::npos) << csv;
  EXPECT_NE(
      host_csv.find(fmt::format(
          ",1,{:.3f},{:.3f},{:.3f},0.000,1500000,\n", static_cast<double>(1000 + ticks(0.75)) / hz,
          static_cast<double>(500 + ticks(0.2)) / hz, static_cast<double>(10 + ticks(0.05)) / hz)),
      std::string::npos)
      << host_csv;
}

TEST_F(ResourceSamplerTest, WithoutPsiOrSchedstatTheFiguresAreEmptyNotZero) {
  auto sampler = make();
  sampler.begin_window("pipeline");
  clock_.t += 1'000'000'000;
  sampler.end_window("pipeline");
  const auto w = sampler.usage().window("pipeline");
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE(w->pressure_read);
  EXPECT_FALSE(w->host_cpu.has_value());
  for (const ProcessUse& p : w->processes)
    EXPECT_FALSE(p.run_queue_delay_s.has_value());
}

TEST_F(ResourceSamplerTest, ARecycledPidIsANewProcess) {
  auto sampler = make();
  sampler.set_workers({101});
  put({.pid = 101, .ppid = 100, .utime = 300, .starttime = 5000, .rss_kb = 9000});
  sampler.begin_window("w");
  // Worker 101 exits and an unrelated child of main gets pid 101: same pid, later start time,
  // counters from zero. Naively subtracting would give negative CPU.
  clock_.t += 1'000'000'000;
  put({.pid = 101, .ppid = 100, .utime = 10, .starttime = 6000, .rss_kb = 2000});
  sampler.end_window("w");
  const ResourceUsage u = sampler.usage();
  int seen = 0;
  for (const auto& p : u.processes()) {
    if (p.pid != 101) continue;
    ++seen;
    EXPECT_TRUE(p.rss_kb == 9000 || p.rss_kb == 2000);
  }
  EXPECT_EQ(seen, 2) << "two processes, each with its own peak";
  const auto w = u.window("w");
  ASSERT_TRUE(w.has_value());
  double cpu_101 = 0;
  for (const auto& p : w->processes) {
    EXPECT_GE(p.cpu_s, 0.0);
    if (p.pid == 101) cpu_101 += p.cpu_s;
  }
  EXPECT_NEAR(cpu_101, 10 * tick_, 1e-9);  // the old one used nothing more; the new one 10 ticks
}

TEST_F(ResourceSamplerTest, PeaksPerProcessAndOfTheTreesTotalPss) {
  auto sampler = make();
  sampler.set_workers({101});
  put({.pid = 100, .ppid = 1, .pss_kb = 1000});
  put({.pid = 101, .ppid = 100, .pss_kb = 4000});
  sampler.sample_now("");
  put({.pid = 100, .ppid = 1, .pss_kb = 3000});
  put({.pid = 101, .ppid = 100, .pss_kb = 500});
  sampler.sample_now("");
  const ResourceUsage u = sampler.usage();
  // Per process 3000 and 4000; the tree's total peaks at 1000 + 4000 + 500 (pid 102) = 5500,
  // not at the sum of per-process peaks (7500).
  EXPECT_EQ(u.total_pss_peak_kb(), 5500);
  EXPECT_EQ(u.host().used_peak_kb, 400000);
  EXPECT_EQ(u.snapshots(), 2);
  for (const auto& p : u.processes()) {
    if (p.pid == 100) {
      EXPECT_EQ(p.pss_kb, 3000);
    } else if (p.pid == 101) {
      EXPECT_EQ(p.pss_kb, 4000);
    }
  }
}

TEST_F(ResourceSamplerTest, AWorkerNamedAfterItsFirstSampleBecomesAWorker) {
  auto sampler = make();
  sampler.sample_now("");
  sampler.set_workers({101});
  sampler.sample_now("");
  const ResourceUsage u = sampler.usage();
  for (const auto& p : u.processes()) {
    if (p.pid == 101) {
      EXPECT_EQ(p.role, "worker");
    }
  }
}

TEST_F(ResourceSamplerTest, ThreadStartsAndStopsWithoutWaitingAnInterval) {
  std::string csv;
  {
    ResourceSampler sampler(procfs_, clock_, {60'000, 100},
                            [&](const Snapshot& s) { csv += s.label + ";"; });
    sampler.start();
    sampler.stop();  // must not wait for the 60 s period
    sampler.stop();  // idempotent
    EXPECT_TRUE(sampler.usage().window("run").has_value());
    EXPECT_TRUE(sampler.usage().window("run")->closed);
  }
  EXPECT_EQ(csv, "start;stop;");
  // The destructor stops a running sampler too.
  ResourceSampler again(procfs_, clock_, {60'000, 100}, nullptr);
  again.start();
}

TEST_F(ResourceSamplerTest, BetweenPassesOverProcTheKnownTreeIsReRead) {
  auto sampler = make();
  sampler.sample_now("", true);                       // finds 100, 101, 102
  put({.pid = 103, .ppid = 100});                     // new, found only by the next pass
  put({.pid = 102, .ppid = 101, .starttime = 9000});  // 102 recycled: another process
  put({.pid = 104, .ppid = 100, .starttime = 9000});  // a worker named by the runner
  sampler.set_workers({104});
  sampler.sample_now("", false);
  Snapshot s = sampler.last_snapshot();
  EXPECT_NE(find(s, 100), nullptr);
  EXPECT_NE(find(s, 101), nullptr);
  EXPECT_EQ(find(s, 102), nullptr);
  EXPECT_EQ(find(s, 103), nullptr);
  ASSERT_NE(find(s, 104), nullptr);
  EXPECT_EQ(find(s, 104)->role, "worker");
  sampler.sample_now("", true);
  s = sampler.last_snapshot();
  EXPECT_EQ(s.processes.size(), 5u);
  EXPECT_EQ(find(s, 102)->starttime_ticks, 9000u);
}

// A job's hook names its DataLoader workers as they start; one of a short epoch may end before
// the next pass over /proc: named, it is read from the next sample on (a child of a member), and
// a named pid whose process is not in the tree (recycled by another parent) is not.
TEST_F(ResourceSamplerTest, AProcessTheJobNamesIsReadBeforeTheNextPass) {
  auto sampler = make();
  sampler.sample_now("", true);  // finds 100, 101, 102
  put({.pid = 105, .ppid = 101, .starttime = 9000, .pss_kb = 700});
  put({.pid = 106, .ppid = 200, .starttime = 9000});  // a pid named, but not in our tree
  sampler.set_role(105, {"worker", 3, {}});
  sampler.set_role(106, {"worker", 4, {}});
  sampler.sample_now("", false);
  const Snapshot s = sampler.last_snapshot();
  ASSERT_NE(find(s, 105), nullptr);
  EXPECT_EQ(find(s, 105)->role, "worker");
  EXPECT_EQ(find(s, 105)->worker, 3);
  EXPECT_EQ(find(s, 105)->mem.pss_kb.value_or(0), 700);
  EXPECT_EQ(find(s, 106), nullptr);
  sampler.sample_now("", false);  // and again, without a pass
  EXPECT_NE(find(sampler.last_snapshot(), 105), nullptr);
}

}  // namespace
}  // namespace mmprof
