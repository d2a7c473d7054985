// JobProcess: a user's command in its own process group, with mmprof as subreaper; exits,
// signals, a missing command, and a daemon that double-forks are all accounted for.
#include "external/job_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof::external {
namespace {

using test::text_or_empty;

using namespace std::chrono_literals;

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

TEST(JobProcess, ReportsTheExitCodeAndTheEnvironmentItWasGiven) {
  test::TempDir dir;
  const auto out = dir.path() / "env.txt";
  JobProcess job({"sh", "-c", "echo \"$MMPROF_X\" > " + out.string() + "; exit 3"},
                 {{"MMPROF_X", "given"}});
  const auto e = job.wait_for(10s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->signal, 0);
  EXPECT_EQ(e->describe(), "exit code 3");
  EXPECT_EQ(text_or_empty(out), "given\n");
}

TEST(JobProcess, RunsInItsOwnGroupAndASignalToTheGroupEndsIt) {
  JobProcess job({"sh", "-c", "sleep 30 & wait"}, {});
  EXPECT_EQ(::getpgid(job.pid()), job.pid());
  EXPECT_NE(::getpgid(job.pid()), ::getpgid(0));
  job.signal_group(SIGTERM);
  const auto e = job.wait_for(10s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(e->exit_code, 128 + SIGTERM);
  EXPECT_NE(e->describe().find("killed by signal 15"), std::string::npos) << e->describe();
}

TEST(JobProcess, ADoubleForkedDaemonIsStillOursAndKilledAtTheEnd) {
  test::TempDir dir;
  const auto pid_file = dir.path() / "daemon.pid";
  // The daemon leaves the group (setsid) and its parent exits: only the subreaper keeps it.
  JobProcess job({"sh", "-c",
                  "(setsid sh -c 'echo $$ > " + pid_file.string() + "; exec sleep 60' &) ; exit 0"},
                 {});
  ASSERT_TRUE(job.wait_for(10s).has_value());
  pid_t daemon = 0;
  for (int i = 0; i < 1500 && daemon == 0; ++i) {  // up to 30 s; as soon as it is written
    std::this_thread::sleep_for(20ms);
    daemon = std::atoi(text_or_empty(pid_file).c_str());
  }
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(alive(daemon));
  const auto killed = job.kill_leftovers();
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_NE(killed[0].find(std::to_string(daemon)), std::string::npos) << killed[0];
  EXPECT_FALSE(alive(daemon));
}

TEST(JobProcess, AMissingOrNonExecutableCommandIsAnInputError) {
  try {
    JobProcess job({"mmprof-no-such-command-xyz"}, {});
    FAIL() << "started";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'mmprof-no-such-command-xyz' was not found on PATH"),
              std::string::npos)
        << e.what();
  }
  test::TempDir dir;
  const auto script = dir.path() / "train.py";
  std::ofstream(script) << "print(1)\n";  // not executable
  EXPECT_THROW(JobProcess({script.string()}, {}), InputError);
}

}  // namespace
}  // namespace mmprof::external
