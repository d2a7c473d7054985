#include "ab/trial_process.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "mmprof/error.hpp"
#include "util/interrupt.hpp"
#include "util/spawn.hpp"

namespace mmprof {

std::filesystem::path self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw UnavailableError("cannot read /proc/self/exe to start trials: " + ec.message());
  return path;
}

int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const Spawned child = spawn({.argv = argv, .stdout_file = log, .stderr_to_stdout = true});
  if (!child.ok()) {
    throw RunError(fmt::format("cannot start trial {}: {}", argv[0], std::strerror(child.error)));
  }
  const pid_t pid = child.pid;
  // Polling rather than a blocking waitpid: the interrupt handler only sets a flag, and the
  // child must hear about it even when the signal was sent to this process alone.
  bool forwarded = false;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0 && errno != EINTR)
      throw RunError(fmt::format("lost trial process {}: {}", pid, std::strerror(errno)));
    if (interrupted() && !forwarded) {
      kill(pid, SIGINT);
      forwarded = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

double host_memory_mib() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGE_SIZE)) / (1024.0 * 1024.0);
}

}  // namespace mmprof
