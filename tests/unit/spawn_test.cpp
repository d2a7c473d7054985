// The one launcher of child processes (util/spawn.hpp): the environment it gives, its
// redirections, its process group and signals, and a start that fails.
#include "util/spawn.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Spawn, TheEnvironmentIsMmprofsWithTheGivenVariablesSetTheLastOfANameWinning) {
  test::TempDir dir;
  ::setenv("MMPROF_SPAWN_TEST_A", "inherited", 1);
  ::setenv("MMPROF_SPAWN_TEST_B", "kept", 1);
  const Spawned c = spawn({.argv = {"sh", "-c", "echo $MMPROF_SPAWN_TEST_A $MMPROF_SPAWN_TEST_B"},
                           .program = "/bin/sh",
                           .env = {"MMPROF_SPAWN_TEST_A=first", "MMPROF_SPAWN_TEST_A=second"},
                           .stdout_file = dir.path() / "out"});
  ASSERT_TRUE(c.ok()) << c.error;
  EXPECT_EQ(wait_exit(c.pid), 0);
  EXPECT_EQ(read_all(dir.path() / "out"), "second kept\n");
  const Spawned only = spawn({.argv = {"sh", "-c", "echo \"[$MMPROF_SPAWN_TEST_B]\" $X"},
                              .program = "/bin/sh",
                              .env = {"X=1"},
                              .inherit_env = false,
                              .stdout_file = dir.path() / "only"});
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(wait_exit(only.pid), 0);
  EXPECT_EQ(read_all(dir.path() / "only"), "[] 1\n");
  ::unsetenv("MMPROF_SPAWN_TEST_A");
  ::unsetenv("MMPROF_SPAWN_TEST_B");
}

TEST(Spawn, StderrFollowsStdoutIntoTheFileAndStdinReadsTheGivenFile) {
  test::TempDir dir;
  { std::ofstream(dir.path() / "in") << "from stdin\n"; }
  const Spawned c = spawn({.argv = {"sh", "-c", "cat; echo to-stderr >&2"},
                           .search_path = true,
                           .stdin_file = dir.path() / "in",
                           .stdout_file = dir.path() / "log",
                           .stderr_to_stdout = true});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(wait_exit(c.pid), 0);
  EXPECT_EQ(read_all(dir.path() / "log"), "from stdin\nto-stderr\n");
}

TEST(Spawn, AnOwnGroupAndDefaultSignalsAreTheChildsAlone) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGINT, &ignore, &before), 0);
  // exit 0 when SIGINT is at its default in the child (not in /proc's SigIgn mask, bit 2).
  const std::string check =
      "m=$(awk '/^SigIgn/ {print $2}' /proc/self/status); [ $(( 0x$m & 2 )) -eq 0 ]";
  const Spawned plain = spawn({.argv = {"sh", "-c", check}, .program = "/bin/sh"});
  const Spawned reset = spawn({.argv = {"sh", "-c", check + "; sleep 0.2"},
                               .program = "/bin/sh",
                               .own_group = true,
                               .default_signals = true});
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(getpgid(reset.pid), reset.pid);
  EXPECT_EQ(getpgid(plain.pid) == plain.pid, false);
  EXPECT_NE(wait_exit(plain.pid), 0);  // an ignored signal stays ignored across exec
  EXPECT_EQ(wait_exit(reset.pid), 0);
  sigaction(SIGINT, &before, nullptr);
}

TEST(Spawn, AProgramThatCannotStartGivesItsErrnoAndNoProcess) {
  const Spawned c = spawn({.argv = {"/nonexistent/mmprof-no-such-program"}});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.pid, -1);
  EXPECT_EQ(c.error, ENOENT);
  EXPECT_EQ(spawn({}).error, EINVAL);
}

}  // namespace
}  // namespace mmprof
