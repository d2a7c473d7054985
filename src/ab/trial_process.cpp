#include "ab/trial_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "mmprof/error.hpp"
#include "util/interrupt.hpp"

extern char** environ;

namespace mmprof {

std::filesystem::path self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw UnavailableError("cannot read /proc/self/exe to start trials: " + ec.message());
  return path;
}

int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw RunError(fmt::format("cannot start trial {}: {}", argv[0], std::strerror(rc)));
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
