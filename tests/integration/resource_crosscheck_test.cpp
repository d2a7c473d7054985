// The resource sampler against the kernel's own accounting, with real child processes (issue 3's
// cross-checks). Children run scripted steps on a pipe handshake so each sample is taken at a
// known point of their life; nothing here depends on timing except the CPU burn.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <mutex>
#include <vector>

#include "probe/resource_sampler.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

// A forked child that runs steps[i] when told to (step()), then waits to be released to exit.
class ScriptedChild {
 public:
  explicit ScriptedChild(std::vector<std::function<void()>> steps) {
    int go[2], done[2];
    if (pipe(go) != 0 || pipe(done) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      close(go[1]);
      close(done[0]);
      char c;
      for (auto& s : steps) {
        if (read(go[0], &c, 1) != 1) _exit(1);
        s();
        if (write(done[1], "d", 1) != 1) _exit(1);
      }
      _exit(read(go[0], &c, 1) == 1 ? 0 : 2);  // released (or the parent went away)
    }
    close(go[0]);
    close(done[1]);
    go_ = go[1];
    done_ = done[0];
  }
  ~ScriptedChild() {
    release();
    wait();
    close(done_);
  }
  ScriptedChild(const ScriptedChild&) = delete;
  ScriptedChild& operator=(const ScriptedChild&) = delete;

  // Runs the next step in the child and returns when it has finished.
  void step() {
    char c = 'g';
    ASSERT_EQ(write(go_, &c, 1), 1);
    ASSERT_EQ(read(done_, &c, 1), 1);
  }
  void release() {
    if (go_ >= 0) {
      [[maybe_unused]] const auto n = write(go_, "x", 1);
      close(go_);
      go_ = -1;
    }
  }
  int wait() {
    if (pid_ <= 0) return status_;
    waitpid(pid_, &status_, 0);
    pid_ = -pid_;
    return status_;
  }
  int pid() const { return pid_ > 0 ? pid_ : -pid_; }

 private:
  int pid_ = 0, go_ = -1, done_ = -1, status_ = 0;
};

class Crosscheck : public ::testing::Test {
 protected:
  // A sample of this process's tree; the child's row.
  ProcessSample sample_of(int pid) {
    sampler_.sample_now("");
    for (const auto& p : sampler_.last_snapshot().processes) {
      if (p.pid == pid) return p;
    }
    ADD_FAILURE() << "pid " << pid << " not sampled";
    return {};
  }

  procfs::ProcFs procfs_;
  MonotonicClock clock_;
  ResourceSampler sampler_{procfs_, clock_, {0, 0}, nullptr};
};

// Not instrumented: under ASan each checked access also reads the shadow byte of its address,
// and one byte per page read over N bytes maps N/8 of shadow into the child, which the PSS
// figure rightly counts but this test does not plant.
__attribute__((no_sanitize("address"))) void touch(void* p, int64_t bytes, bool write) {
  volatile char* c = static_cast<volatile char*>(p);
  const long page = sysconf(_SC_PAGESIZE);
  char sum = 0;
  for (int64_t i = 0; i < bytes; i += page) {
    if (write) {
      c[i] = 1;
    } else {
      sum = static_cast<char>(sum + c[i]);
    }
  }
  (void)sum;
}

TEST_F(Crosscheck, TouchedMemoryRaisesRssAndUssByAtLeastItsSize) {
  constexpr int64_t n = 64 * kMiB;
  ScriptedChild child({[] {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(3);
    touch(p, n, true);
  }});
  const ProcessSample before = sample_of(child.pid());
  child.step();
  const ProcessSample after = sample_of(child.pid());
  ASSERT_TRUE(before.mem.rss_kb && after.mem.rss_kb && before.mem.uss_kb() && after.mem.uss_kb());
  EXPECT_GE(*after.mem.rss_kb - *before.mem.rss_kb, n / 1024);
  EXPECT_GE(*after.mem.uss_kb() - *before.mem.uss_kb(), n / 1024);
  EXPECT_EQ(after.role, "external");  // a child that is not a loader worker
}

// Proportional set size splits a shared page among its mappers: two processes that both touch an
// N MiB MAP_SHARED mapping are charged N/2 each. The parent maps it before forking and unmaps
// it at once, so exactly two processes share it.
TEST_F(Crosscheck, TwoProcessesSharingAMappingAreEachChargedHalfInPss) {
  constexpr int64_t n = 128 * kMiB;
  void* shared = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  ScriptedChild writer({[&] { touch(shared, n, true); }});
  ScriptedChild reader({[&] { touch(shared, n, false); }});
  munmap(shared, n);
  const ProcessSample w0 = sample_of(writer.pid()), r0 = sample_of(reader.pid());
  writer.step();
  reader.step();
  const ProcessSample w1 = sample_of(writer.pid()), r1 = sample_of(reader.pid());
  const double half_kb = static_cast<double>(n) / 1024 / 2;
  for (const auto& [before, after] : {std::pair{w0, w1}, std::pair{r0, r1}}) {
    ASSERT_TRUE(before.mem.pss_kb && after.mem.pss_kb);
    const double rise = static_cast<double>(*after.mem.pss_kb - *before.mem.pss_kb);
    EXPECT_NEAR(rise, half_kb, 0.05 * half_kb) << "pid " << after.pid;
    if (after.mem.pss_shmem_kb) {
      EXPECT_NEAR(static_cast<double>(*after.mem.pss_shmem_kb), half_kb, 0.05 * half_kb);
    }
  }
}

double cpu_seconds_of_children() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

TEST_F(Crosscheck, CpuSecondsMatchGetrusageWithinTenPercent) {
  const double before = cpu_seconds_of_children();
  ScriptedChild child({[] {
    // Burns 0.6 s of its own CPU time (not wall time: the machine may be busy).
    timespec t{};
    double sink = 1;
    do {
      for (int i = 0; i < 100000; ++i)
        sink = sink * 1.0000001 + 1e-9;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9 < 0.6);
    if (sink < 0) _exit(4);
  }});
  child.step();
  const ProcessSample last = sample_of(child.pid());  // just before it exits
  child.release();
  child.wait();
  const double kernel = cpu_seconds_of_children() - before;
  EXPECT_GE(kernel, 0.6);
  EXPECT_NEAR(last.cpu_s(), kernel, 0.1 * kernel);
}

TEST_F(Crosscheck, ReadingAFileCountsAtLeastItsSize) {
  test::TempDir dir;
  const auto file = dir.path() / "data.bin";
  constexpr size_t size = 8 * 1024 * 1024 + 123;
  test::write_bytes(file, std::vector<uint8_t>(size, 7));
  sampler_.begin_window("read");
  ScriptedChild child({[&] {
    const int fd = open(file.c_str(), O_RDONLY);
    std::vector<char> buf(1 << 16);
    while (read(fd, buf.data(), buf.size()) > 0) {
    }
    close(fd);
  }});
  child.step();
  const ProcessSample p = sample_of(child.pid());
  sampler_.end_window("read");
  // rchar counts bytes returned by read(); read_bytes only what came from storage (0 when the
  // file is in the page cache, as here right after writing it).
  ASSERT_TRUE(p.io.rchar.has_value()) << "/proc/PID/io unreadable";
  EXPECT_GE(std::max(*p.io.rchar, p.io.read_bytes.value_or(0)), size);
  const auto w = sampler_.usage().window("read");
  ASSERT_TRUE(w.has_value());
  EXPECT_GE(w->io().rchar.value_or(0), size);  // the child was born inside the window
}

TEST_F(Crosscheck, ProcessesExitingBetweenSamplesDoNotBreakTheSampler) {
  // A zombie (exited, not reaped) is sampled without memory; once reaped it is simply gone.
  ScriptedChild child({});
  child.release();
  for (int i = 0; i < 2000 && procfs_.stat(child.pid())->state != 'Z'; ++i)
    usleep(1000);
  const ProcessSample zombie = sample_of(child.pid());
  EXPECT_EQ(zombie.state, 'Z');
  EXPECT_FALSE(zombie.mem.rss_kb.has_value());
  const int pid = child.pid();
  child.wait();
  sampler_.sample_now("");
  for (const auto& p : sampler_.last_snapshot().processes)
    EXPECT_NE(p.pid, pid);

  // And with the sampler's own thread racing short-lived children: at least 50 of them, and
  // until it has taken 10 samples (a starved sampler thread takes longer, never fewer).
  ResourceSampler fast(procfs_, clock_, {1, 0}, nullptr);
  fast.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 0;
       i < 50 || (fast.usage().snapshots() < 10 && std::chrono::steady_clock::now() < deadline);
       ++i) {
    const pid_t c = fork();
    if (c == 0) _exit(0);
    usleep(2000);
    waitpid(c, nullptr, 0);
  }
  fast.stop();
  const ResourceUsage u = fast.usage();
  EXPECT_TRUE(u.error.empty()) << u.error;
  EXPECT_GE(u.snapshots(), 10);
}

TEST_F(Crosscheck, PeriodicSamplesOverTheSmapsBudgetKeepRssFromStatm) {
  // With no budget, periodic samples read RSS from statm and leave PSS/USS empty (not zero);
  // samples asked for still read smaps_rollup.
  std::vector<Snapshot> periodic;
  std::mutex m;
  ResourceSampler sampler(procfs_, clock_, {1, 0, /*smaps_cpu_share=*/0.0}, [&](const Snapshot& s) {
    std::lock_guard lock(m);
    if (s.label.empty()) periodic.push_back(s);
  });
  sampler.start();
  for (int i = 0; i < 5000; ++i) {  // a loaded machine may delay the thread: wait for 3 samples
    {
      std::lock_guard lock(m);
      if (periodic.size() >= 3) break;
    }
    usleep(1000);
  }
  // stop() joins the thread, then takes its last sample ("stop"), which is one asked for.
  sampler.stop();
  const Snapshot asked = sampler.last_snapshot();
  ASSERT_FALSE(periodic.empty());
  for (const auto& s : periodic) {
    const ProcessSample& self = s.processes.at(0);
    EXPECT_TRUE(self.mem.rss_kb.has_value());
    EXPECT_GT(*self.mem.rss_kb, 0);
    EXPECT_FALSE(self.mem.pss_kb.has_value());
  }
  EXPECT_TRUE(asked.processes.at(0).mem.pss_kb.has_value());
  // statm and smaps_rollup count the same resident pages: within 5% for this mostly idle
  // process (its RSS moves a little between the two samples).
  const auto statm_kb = static_cast<double>(*periodic.back().processes.at(0).mem.rss_kb);
  const auto smaps_kb = static_cast<double>(*asked.processes.at(0).mem.rss_kb);
  EXPECT_NEAR(statm_kb, smaps_kb, 0.05 * smaps_kb);
}

}  // namespace
}  // namespace mmprof
