// A worker's bounded set of open data files: least recently used closed first, a failed open
// reported with its errno, and a capacity that fits what the open-files limit leaves.
#include "data/open_files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

// Whether this process has a descriptor open on `path`.
bool holds(const fs::path& path) {
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(e.path(), ec) == path) return true;
  }
  return false;
}

TEST(OpenFiles, HoldsAtMostItsCapacityClosingTheLeastRecentlyUsed) {
  test::TempDir dir;
  for (const char* name : {"a", "b", "c"})
    std::ofstream(dir.path() / name) << name;
  OpenFiles files(2);
  const int a = files.get(0, dir.path() / "a");
  ASSERT_GE(a, 0);
  ASSERT_GE(files.get(1, dir.path() / "b"), 0);
  EXPECT_EQ(files.get(0, dir.path() / "a"), a);  // held: a is now the most recent
  ASSERT_GE(files.get(2, dir.path() / "c"), 0);  // b, the least recent, makes room
  EXPECT_EQ(files.held(), 2u);
  EXPECT_FALSE(holds(dir.path() / "b"));
  EXPECT_TRUE(holds(dir.path() / "a"));
  EXPECT_TRUE(holds(dir.path() / "c"));
  EXPECT_EQ(files.get(0, dir.path() / "a"), a);
  char byte = 0;
  ASSERT_EQ(pread(files.get(1, dir.path() / "b"), &byte, 1, 0), 1);  // b opened again
  EXPECT_EQ(byte, 'b');
  EXPECT_EQ(files.held(), 2u);
}

TEST(OpenFiles, AFailedOpenKeepsItsErrno) {
  test::TempDir dir;
  OpenFiles files(4);
  errno = 0;
  EXPECT_EQ(files.get(0, dir.path() / "missing"), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(files.held(), 0u);
}

// Run in a child: it lowers its own open-files limit.
TEST(OpenFiles, CapacityFitsHalfOfWhatTheLimitLeaves) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    size_t open = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
      (void)e;
      ++open;
    }
    --open;  // the iterator's own descriptor
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = open + 10;  // 10 left: 5 for one holder, 2 each for two, 1 for many
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(10);
    const bool ok = OpenFiles::capacity_for(1) == 5 && OpenFiles::capacity_for(2) == 2 &&
                    OpenFiles::capacity_for(64) == 1;
    lim.rlim_cur = open + 1000;
    setrlimit(RLIMIT_NOFILE, &lim);
    _exit(ok && OpenFiles::capacity_for(1) == OpenFiles::kMaxCapacity ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace mmprof
