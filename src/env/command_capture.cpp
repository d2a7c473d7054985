#include "env/command_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/spawn.hpp"

namespace mmprof::env {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

// Reads both pipes until EOF or the deadline. Returns false on timeout.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err,
           std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_count = 2;
  char buf[8192];
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int rc = poll(fds, 2, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return rc < 0;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? out : err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  return true;
}

}  // namespace

CaptureResult capture_command(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env,
                              std::chrono::milliseconds timeout) {
  CaptureResult r;
  Pipe out, err;
  if (argv.empty() || pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0) {
    r.error = argv.empty() ? "empty command" : std::strerror(errno);
    return r;
  }
  const Spawned child = spawn({.argv = argv,
                               .search_path = true,
                               .env = env,
                               .stdin_file = "/dev/null",
                               .stdout_fd = out.fd[1],
                               .stderr_fd = err.fd[1]});
  close(out.fd[1]), out.fd[1] = -1;
  close(err.fd[1]), err.fd[1] = -1;
  if (!child.ok()) {
    r.error = argv[0] + ": " + std::strerror(child.error);
    return r;
  }
  const pid_t pid = child.pid;
  r.started = true;
  std::string err_text;
  r.timed_out =
      !drain(out.fd[0], err.fd[0], r.out, err_text, std::chrono::steady_clock::now() + timeout);
  if (r.timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.error = err_text.substr(0, err_text.find('\n'));
  if (r.timed_out) r.error = "timed out";
  return r;
}

}  // namespace mmprof::env
