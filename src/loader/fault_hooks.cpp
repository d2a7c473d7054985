#include "loader/fault_hooks.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

namespace mmprof {
namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

FaultHooks::FaultHooks()
    : crash_at_(env_or_empty("MMPROF_TEST_CRASH_AT")),
      hang_at_(env_or_empty("MMPROF_TEST_HANG_AT")),
      no_fds_at_(env_or_empty("MMPROF_TEST_NO_FDS_AT")) {
  armed_ = !crash_at_.empty() || !hang_at_.empty() || !no_fds_at_.empty();
}

void FaultHooks::fire(const std::string& key) const {
  if (key == crash_at_) raise(SIGSEGV);
  if (key == no_fds_at_) {
    // Only stdin, stdout and stderr fit under the limit now: the worker's next open(2) fails
    // with EMFILE, while the descriptors it holds keep working.
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = 3;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (key == hang_at_) {
    for (;;)
      pause();  // only SIGKILL (the loader's timeout, or the main process dying) ends this
  }
}

}  // namespace mmprof
