#include "ab/trial_process.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "mmprof/error.hpp"
#include "util/interrupt.hpp"
#include "util/spawn.hpp"

namespace mmprof {
namespace {

constexpr int kPollMs = 20;

}  // namespace

std::filesystem::path self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw UnavailableError("cannot read /proc/self/exe to start trials: " + ec.message());
  return path;
}

int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const Spawned child = spawn({.argv = argv,
                               .env = {fmt::format("{}={}", kDieWithEnv, getpid())},
                               .stdout_file = log,
                               .stderr_to_stdout = true});
  if (!child.ok()) {
    throw RunError(fmt::format("cannot start trial {}: {}", argv[0], std::strerror(child.error)));
  }
  const pid_t pid = child.pid;
  // Polling rather than a blocking waitpid: the interrupt handler only sets a flag, and the
  // child must hear about it even when the signal was sent to this process alone. The first
  // signal is passed on (the trial stops between batches); a second too (the trial ends at once,
  // its job with it), and a trial still there a second later is killed.
  int forwarded = 0;
  int waited_ms = 0;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0 && errno != EINTR)
      throw RunError(fmt::format("lost trial process {}: {}", pid, std::strerror(errno)));
    if (forwarded < (interrupted() ? 1 : 0) + (interrupted_again() ? 1 : 0)) {
      kill(pid, SIGINT);
      ++forwarded;
    }
    if (forwarded == 2 && (waited_ms += kPollMs) > 1000) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

double host_memory_mib() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGE_SIZE)) / (1024.0 * 1024.0);
}

}  // namespace mmprof
