#include "loader/worker_pool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "loader/batch_filler.hpp"
#include "probe/clock.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

bool read_full(int fd, void* buf, size_t n) noexcept {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* buf, size_t n) noexcept {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t r = ::write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void make_pipe(int& read_end, int& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2 for", "a loader worker");
  read_end = fds[0];
  write_end = fds[1];
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

void run_worker_loop(const Config& config, const Dataset& dataset, const SlotRing& ring, int id,
                     int task_fd, int done_fd) {
  BatchFiller filler(config, dataset, id);
  uint32_t slot = 0;
  while (read_full(task_fd, &slot, sizeof slot)) {
    filler.fill(ring.slot(slot));
    if (!write_full(done_fd, &slot, sizeof slot)) break;
  }
}

WorkerPool::WorkerPool(const Config& config, const Dataset& dataset, const SlotRing& ring,
                       int workers, WorkerMode mode)
    : config_(config), dataset_(dataset), ring_(ring), mode_(mode), workers_(workers) {
  for (int id = 0; id < workers; ++id) {
    Worker& w = workers_[id];
    make_pipe(w.task_read, w.task_write);
    make_pipe(w.done_read, w.done_write);
    if (mode == WorkerMode::process) {
      start_process(id);
    } else {
      w.thread = std::thread([this, id] {
        Worker& self = workers_[id];
        try {
          run_worker_loop(config_, dataset_, ring_, id, self.task_read, self.done_write);
        } catch (const std::exception& e) {
          // Closing the done pipe makes main report this worker as stopped.
          std::fprintf(stderr, "mmprof: loader worker thread %d failed: %s\n", id, e.what());
        }
        close_fd(self.done_write);
      });
    }
  }
}

void WorkerPool::close_other_fds(int keep) noexcept {
  // A child must not hold another worker's pipe ends: main detects a dead worker by the EOF on
  // its done pipe, which only comes when every copy of the write end is closed.
  for (int id = 0; id < static_cast<int>(workers_.size()); ++id) {
    Worker& w = workers_[id];
    close_fd(w.task_write);
    close_fd(w.done_read);
    if (id != keep) {
      close_fd(w.task_read);
      close_fd(w.done_write);
    }
  }
}

void WorkerPool::start_process(int id) {
  std::fflush(nullptr);  // the child must not flush the parent's buffered output a second time
  const pid_t pid = fork();
  if (pid < 0) throw_errno("fork of loader worker", std::to_string(id));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the main process
    signal(SIGINT, SIG_IGN);           // Ctrl-C is the main process's to handle
    close_other_fds(id);
    int code = 0;
    try {
      run_worker_loop(config_, dataset_, ring_, id, workers_[id].task_read,
                      workers_[id].done_write);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mmprof: loader worker %d failed: %s\n", id, e.what());
      code = 1;
    }
    _exit(code);  // no atexit handlers, no destructors of the parent's objects
  }
  workers_[id].pid = pid;
  close_fd(workers_[id].task_read);
  close_fd(workers_[id].done_write);
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_)
    close_fd(w.task_write);  // EOF: workers finish their batch and leave
  for (auto& w : workers_) {
    if (w.thread.joinable()) w.thread.join();
    if (w.pid > 0) {
      // A worker in the middle of a big video gets a moment, then is killed.
      int status = 0;
      const int64_t deadline = monotonic_ns() + 2'000'000'000;
      while (waitpid(w.pid, &status, WNOHANG) == 0) {
        if (monotonic_ns() > deadline) {
          kill(w.pid, SIGKILL);
          waitpid(w.pid, &status, 0);
          break;
        }
        usleep(1000);
      }
    }
    close_fd(w.task_read);
    close_fd(w.done_read);
  }
}

void WorkerPool::dispatch(int worker, uint32_t slot) {
  if (!write_full(workers_[worker].task_write, &slot, sizeof slot)) report_death(worker);
}

void WorkerPool::wait_completions(int timeout_ms, std::vector<std::pair<int, uint32_t>>& done) {
  std::vector<pollfd> fds(workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i)
    fds[i] = {workers_[i].done_read, POLLIN, 0};
  const int n = poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0 && errno != EINTR) throw_errno("poll on", "the loader's done pipes");
  for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
    if ((fds[i].revents & POLLIN) != 0) {
      uint32_t slot;
      if (!read_full(fds[i].fd, &slot, sizeof slot)) report_death(static_cast<int>(i));
      done.emplace_back(static_cast<int>(i), slot);
    } else if ((fds[i].revents & (POLLHUP | POLLERR)) != 0) {
      report_death(static_cast<int>(i));
    }
  }
}

void WorkerPool::report_death(int worker) {
  Worker& w = workers_[worker];
  if (w.pid <= 0)
    throw RunError(fmt::format("loader worker thread {} stopped unexpectedly", worker));
  int status = 0;
  const pid_t r = waitpid(w.pid, &status, 0);
  const std::string how = r == w.pid ? describe_status(status) : "vanished";
  const int pid = w.pid;
  w.pid = 0;
  throw RunError(fmt::format("loader worker {} (pid {}) {}", worker, pid, how));
}

std::vector<int> WorkerPool::pids() const {
  std::vector<int> out;
  for (const auto& w : workers_) {
    if (w.pid > 0) out.push_back(w.pid);
  }
  return out;
}

}  // namespace mmprof
