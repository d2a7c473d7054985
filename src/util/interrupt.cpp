#include "util/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "util/error.hpp"

namespace mmprof {
namespace {

std::atomic<int> g_signal{0};

void on_signal(int sig) {
  if (g_signal.exchange(sig) != 0) _exit(128 + sig);
}

}  // namespace

void install_interrupt_handler() noexcept {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() noexcept {
  return g_signal.load() != 0;
}

void throw_if_interrupted() {
  if (interrupted())
    throw Error(ExitCode::interrupted, "interrupted by a signal; partial results kept");
}

}  // namespace mmprof
