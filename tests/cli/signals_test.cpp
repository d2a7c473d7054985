// Every exit path of a run, through the built binary: normal, error, SIGINT, SIGTERM to the
// whole process group, a second SIGINT that forces, SIGKILL of the main process. Each must end in
// bounded time with the workers gone and nothing left in /dev/shm (the batch ring is a memfd,
// checked in a live worker's mappings); the graceful ones keep the run directory, marked
// interrupted. A 1 MB /dev/shm does not matter either (a private mount namespace, where allowed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::text_or_empty;

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

bool wait_for(const std::function<bool()>& done, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// mmprof started in its own process group, output to a log file.
class Running {
 public:
  Running(const std::vector<std::string>& args, const fs::path& log) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      const int null = open("/dev/null", O_RDONLY);
      dup2(null, 0);
      std::vector<char*> argv;
      const std::string bin = test::mmprof_bin();
      argv.push_back(const_cast<char*>(bin.c_str()));
      for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    setpgid(pid_, pid_);
  }
  ~Running() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  pid_t pid() const { return pid_; }

  // The exit code (128 + signal when killed), or -1 if it is still running after `seconds`.
  int wait_exit(double seconds) {
    int status = 0;
    const bool exited = wait_for([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, seconds);
    if (!exited) return -1;
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = 0;
};

// The pids resources.csv names in `role` ("worker", "main"; "": every one).
std::set<int> pids_of(const fs::path& run, const std::string& wanted = "worker") {
  std::set<int> pids;
  std::istringstream lines(text_or_empty(run / "resources.csv"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string t, pid, role;
    std::getline(fields, t, ',');
    std::getline(fields, pid, ',');
    std::getline(fields, role, ',');
    if (role != "role" && (wanted.empty() || role == wanted)) pids.insert(std::stoi(pid));
  }
  return pids;
}

// Gone: no such process, or a zombie waiting for a reaper that is not mmprof.
bool process_gone(int pid) {
  const std::string stat = text_or_empty("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z");
}

std::set<std::string> mmprof_shm_entries() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename();
    if (name.find("mmprof") != std::string::npos) names.insert(name);
  }
  return names;
}

size_t steps_rows(const fs::path& run) {
  const std::string csv = text_or_empty(run / "steps.csv");
  return csv.empty() ? 0 : static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1;
}

class SignalsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const auto gen = test::run_mmprof("gen --out " + test::shell_quote(data().parent_path()) +
                                      " --images 16 --videos 1 --video-max-s 1 "
                                      "--video-max-height 240 --layout files --seed 9");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void SetUp() override { shm_before_ = mmprof_shm_entries(); }
  void TearDown() override { EXPECT_EQ(mmprof_shm_entries(), shm_before_); }

  static fs::path data() { return dir_->path() / "ds" / "files"; }
  static fs::path out(const std::string& name) { return dir_->path() / name; }

  // A run that lasts until stopped: a long pipeline phase, or with step_ms a short one followed
  // by the step's slow compute phase.
  static std::vector<std::string> long_run(const fs::path& run, const std::string& step_ms = "") {
    const std::string steps = step_ms.empty() ? "1000000" : "3";
    std::vector<std::string> args = {"baseline",
                                     "--data",
                                     data().string(),
                                     "--out",
                                     run.string(),
                                     "--set",
                                     "loader.batch_size=2",
                                     "--set",
                                     "phases.warmup_steps=0",
                                     "--set",
                                     "phases.steps=" + steps,
                                     "--set",
                                     "metrics.interval_ms=50"};
    if (!step_ms.empty()) {
      args.insert(args.end(), {"--set", "step.kind=sleep", "--set", "step.ms=" + step_ms});
    }
    return args;
  }

  // Waits until the run has workers (named in resources.csv) and, for a pipeline, steps.
  static std::set<int> wait_until_running(const fs::path& run, size_t min_steps) {
    std::set<int> pids;
    EXPECT_TRUE(wait_for(
        [&] {
          pids = pids_of(run);
          return pids.size() >= 2 && steps_rows(run) >= min_steps;
        },
        60))
        << text_or_empty(run.string() + ".log");
    return pids;
  }

  static void expect_all_gone(const std::set<int>& pids) {
    for (int pid : pids) {
      EXPECT_TRUE(wait_for([&] { return process_gone(pid); }, 5)) << "worker " << pid << " lives";
    }
  }

  static std::unique_ptr<test::TempDir> dir_;
  std::set<std::string> shm_before_;
};

std::unique_ptr<test::TempDir> SignalsTest::dir_;

TEST_F(SignalsTest, SigintStopsGracefullyKeepsTheRunAndReapsTheWorkers) {
  const fs::path run = out("sigint");
  Running mmprof(long_run(run), run.string() + ".log");
  const std::set<int> workers = wait_until_running(run, 3);
  // The ring is an anonymous memfd, never a /dev/shm file.
  const std::string maps = text_or_empty("/proc/" + std::to_string(*workers.begin()) + "/maps");
  EXPECT_NE(maps.find("/memfd:mmprof-batches"), std::string::npos);
  EXPECT_EQ(maps.find("/dev/shm"), std::string::npos);
  ASSERT_EQ(kill(mmprof.pid(), SIGINT), 0);
  EXPECT_EQ(mmprof.wait_exit(20), 130) << text_or_empty(run.string() + ".log");
  expect_all_gone(workers);
  const json summary = json::parse(text_or_empty(run / "summary.json"));
  EXPECT_EQ(summary["status"], "interrupted");
  EXPECT_GE(steps_rows(run), 3u);
  EXPECT_TRUE(json::parse(text_or_empty(run / "manifest.json")).is_object());
}

TEST_F(SignalsTest, SigtermToTheProcessGroupStopsGracefullyToo) {
  const fs::path run = out("sigterm");
  Running mmprof(long_run(run), run.string() + ".log");
  const std::set<int> workers = wait_until_running(run, 3);
  ASSERT_EQ(killpg(mmprof.pid(), SIGTERM), 0);  // workers get it too, and leave it to main
  EXPECT_EQ(mmprof.wait_exit(20), 130) << text_or_empty(run.string() + ".log");
  expect_all_gone(workers);
  EXPECT_EQ(json::parse(text_or_empty(run / "summary.json"))["status"], "interrupted");
}

TEST_F(SignalsTest, ASecondSigintForcesTheExit) {
  const fs::path run = out("sigint-twice");
  // After 3 pipeline steps the compute phase sleeps 10 minutes per step: a graceful stop waits for
  // the step to end, so only the second SIGINT can end the run within the test.
  Running mmprof(long_run(run, "600000"), run.string() + ".log");
  wait_until_running(run, 3);
  const std::set<int> workers = pids_of(run);
  // In the step's sleep: the compute phase began (its resources.csv sample) and the main thread
  // sleeps in the kernel.
  const std::string wchan = "/proc/" + std::to_string(mmprof.pid()) + "/wchan";
  ASSERT_TRUE(wait_for(
      [&] {
        return text_or_empty(run / "resources.csv").find(",compute_start") != std::string::npos &&
               text_or_empty(wchan) == "hrtimer_nanosleep";
      },
      60))
      << text_or_empty(run.string() + ".log");
  ASSERT_EQ(kill(mmprof.pid(), SIGINT), 0);
  EXPECT_EQ(mmprof.wait_exit(0.3), -1) << "the first SIGINT waits for the step";
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(mmprof.pid(), SIGINT), 0);
  EXPECT_EQ(mmprof.wait_exit(60), 130);
  // Far from the step's 10 minutes: the second SIGINT did not wait for it.
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 60.0);
  expect_all_gone(workers);
}

// `ab` of two arms whose trials last until stopped (as long_run's), in its own process group.
std::vector<std::string> endless_ab(const fs::path& data, const fs::path& out,
                                    const std::vector<std::string>& sets) {
  std::vector<std::string> args = {"ab",
                                   "--data",
                                   data.string(),
                                   "--out",
                                   out.string(),
                                   "--factor",
                                   "loader.num_workers=1,2",
                                   "--warmup-s",
                                   "0",
                                   "--set",
                                   "loader.batch_size=2",
                                   "--set",
                                   "metrics.interval_ms=50"};
  for (const auto& s : sets)
    args.insert(args.end(), {"--set", s});
  return args;
}

// The run directory of the first trial, once its resources.csv names its main and a worker.
fs::path first_trial(const fs::path& out) {
  fs::path found;
  wait_for(
      [&] {
        std::error_code ec;
        for (fs::recursive_directory_iterator it(out, ec), end; !ec && it != end;
             it.increment(ec)) {
          if (it->path().filename() == "resources.csv") found = it->path().parent_path();
        }
        return !found.empty() && pids_of(found, "").size() >= 2;  // its main and a worker
      },
      60);
  return found;
}

// Issue 34 item 5: a second signal to `ab` while a trial sleeps in a 10-minute step. Before, ab
// exited at once (143), leaving the trial running and experiment.json "running"; now the trial
// is ended first and the experiment is written as interrupted, within seconds.
TEST_F(SignalsTest, ASecondSignalToAbEndsItsTrialAndKeepsTheExperiment) {
  const fs::path exp = out("ab-twice");
  Running ab(
      endless_ab(data(), exp,
                 {"phases.steps=3", "phases.warmup_steps=0", "step.kind=sleep", "step.ms=600000"}),
      exp.string() + ".log");
  const fs::path trial = first_trial(exp);
  ASSERT_FALSE(trial.empty()) << text_or_empty(exp.string() + ".log");
  ASSERT_TRUE(wait_for(
      [&] {
        return text_or_empty(trial / "resources.csv").find(",compute_start") != std::string::npos;
      },
      60));
  const std::set<int> trial_pids = pids_of(trial, "");
  ASSERT_EQ(kill(ab.pid(), SIGTERM), 0);
  EXPECT_EQ(ab.wait_exit(0.3), -1) << "the first signal waits for the trial's step";
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(ab.pid(), SIGTERM), 0);
  EXPECT_EQ(ab.wait_exit(30), 130) << text_or_empty(exp.string() + ".log");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  expect_all_gone(trial_pids);
  const json e = json::parse(text_or_empty(exp / "experiment.json"));
  EXPECT_EQ(e["status"], "interrupted");
}

// And a SIGKILL of `ab`: its trial hears of it (SIGTERM, its first interrupt), stops between
// batches and keeps its run directory.
TEST_F(SignalsTest, AnAbKilledBySigkillStopsItsTrial) {
  const fs::path exp = out("ab-killed");
  Running ab(endless_ab(data(), exp, {"phases.steps=1000000", "phases.warmup_steps=0"}),
             exp.string() + ".log");
  const fs::path trial = first_trial(exp);
  ASSERT_FALSE(trial.empty()) << text_or_empty(exp.string() + ".log");
  const std::set<int> trial_pids = pids_of(trial, "");
  ASSERT_EQ(kill(ab.pid(), SIGKILL), 0);
  EXPECT_EQ(ab.wait_exit(5), 128 + SIGKILL);
  expect_all_gone(trial_pids);
  EXPECT_TRUE(wait_for(
      [&] {
        return text_or_empty(trial / "summary.json").find("\"interrupted\"") != std::string::npos;
      },
      20))
      << text_or_empty(trial / "summary.json");
}

TEST_F(SignalsTest, SigkillOfTheMainProcessTakesTheWorkersWithIt) {
  const fs::path run = out("sigkill");
  Running mmprof(long_run(run), run.string() + ".log");
  const std::set<int> workers = wait_until_running(run, 1);
  ASSERT_EQ(kill(mmprof.pid(), SIGKILL), 0);
  EXPECT_EQ(mmprof.wait_exit(5), 128 + SIGKILL);
  expect_all_gone(workers);  // PR_SET_PDEATHSIG; the memfd dies with its last mapping
}

TEST_F(SignalsTest, NormalAndFailedRunsLeaveNothingBehind) {
  const fs::path ok = out("normal");
  const auto r = test::run_mmprof("baseline --data " + test::shell_quote(data()) +
                                  " --set phases.steps=3 --set phases.warmup_steps=0 --out " +
                                  test::shell_quote(ok));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (int pid : pids_of(ok))
    EXPECT_TRUE(process_gone(pid)) << pid;
  const fs::path bad = out("failed");
  const auto failed =
      test::run_command("MMPROF_TEST_CRASH_AT=000003 " + test::shell_quote(test::mmprof_bin()) +
                        " baseline --data " + test::shell_quote(data()) +
                        " --set loader.on_worker_failure=fail --set loader.shuffle=false" +
                        " --set phases.steps=3 --out " + test::shell_quote(bad) + " </dev/null");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_EQ(json::parse(text_or_empty(bad / "summary.json"))["status"], "failed");
  for (int pid : pids_of(bad))
    EXPECT_TRUE(wait_for([&] { return process_gone(pid); }, 5)) << pid;
}

TEST_F(SignalsTest, ATinyDevShmDoesNotMatter) {
  if (test::run_command("unshare -m true").exit_code != 0) {
    MMPROF_SKIP_WITHOUT("mountns", "no private mount namespace here (needs CAP_SYS_ADMIN)");
  }
  const auto r = test::run_command(
      "unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm && " +
      test::shell_quote(test::mmprof_bin()) + " baseline --data " + test::shell_quote(data()) +
      " --set loader.batch_size=8 --set phases.steps=4 --set phases.warmup_steps=0 --out " +
      test::shell_quote(out("tiny-shm")) + "' </dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(text_or_empty(out("tiny-shm") / "summary.json"))["status"], "complete");
}

}  // namespace
}  // namespace mmprof
