#include "loader/fault_hooks.hpp"

#include <signal.h>
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
      hang_at_(env_or_empty("MMPROF_TEST_HANG_AT")) {
  armed_ = !crash_at_.empty() || !hang_at_.empty();
}

void FaultHooks::fire(const std::string& key) const {
  if (key == crash_at_) raise(SIGSEGV);
  if (key == hang_at_) {
    for (;;)
      pause();  // only SIGKILL (the loader's timeout, or the main process dying) ends this
  }
}

}  // namespace mmprof
