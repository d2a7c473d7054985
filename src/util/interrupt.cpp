#include "util/interrupt.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "util/error.hpp"

namespace mmprof {
namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_again{0};
std::atomic<bool> g_supervising{false};

void on_alarm(int /*sig*/) {
  _exit(128 + g_again.load());
}

void on_signal(int sig) {
  if (g_signal.exchange(sig) == 0) return;
  if (!g_supervising.load()) _exit(128 + sig);
  if (g_again.exchange(sig) == 0) alarm(kSecondSignalGraceS);
}

// A child asked to die with its parent (kDieWithEnv): SIGTERM when the parent goes, or now when
// it went before the request was made. The variable is not passed on to this process's children.
void die_with_parent_as_asked() noexcept {
  const char* parent = std::getenv(kDieWithEnv);
  if (parent == nullptr) return;
  const long pid = std::strtol(parent, nullptr, 10);
  unsetenv(kDieWithEnv);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (pid > 0 && getppid() != static_cast<pid_t>(pid)) raise(SIGTERM);
}

}  // namespace

void install_interrupt_handler() noexcept {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  die_with_parent_as_asked();
}

void supervise_children() noexcept {
  struct sigaction sa {};
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  g_supervising.store(true);
}

bool interrupted() noexcept {
  return g_signal.load() != 0;
}

bool interrupted_again() noexcept {
  return g_again.load() != 0;
}

void throw_if_interrupted() {
  if (interrupted())
    throw Error(ExitCode::interrupted, "interrupted by a signal; partial results kept");
}

}  // namespace mmprof
