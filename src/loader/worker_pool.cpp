#include "loader/worker_pool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "loader/batch_filler.hpp"
#include "probe/clock.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

// A worker that closed its done pipe is exiting: it gets this long to finish before SIGKILL, and
// as long again to be reaped after it. Past that it is left to the kernel (a process stuck in
// uninterruptible I/O cannot be waited for without hanging mmprof).
constexpr int64_t kExitGraceNs = 2'000'000'000;

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

// The task channel is a socket so that main writes with MSG_NOSIGNAL: a write to a worker that
// just died fails with EPIPE instead of killing main with SIGPIPE.
void make_task_channel(int& worker_end, int& main_end) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw_errno("socketpair for", "a loader worker");
  }
  worker_end = fds[0];
  main_end = fds[1];
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

// waitpid without blocking past `deadline_ns`: true (and the status) once the child is reaped.
bool wait_until(pid_t pid, int64_t deadline_ns, int& status) noexcept {
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return r == pid;
    if (monotonic_ns() > deadline_ns) return false;
    usleep(1000);
  }
}

// loader.pin_workers: worker `id` runs only on the id-th CPU (modulo) of the affinity mask it
// inherited, so it stops migrating between cores; its buffers are first touched there, which is
// what places them on that CPU's NUMA node.
void pin_to_cpu(int id) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    throw RunError(
        fmt::format("loader worker {}: sched_getaffinity failed: {}", id, std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  const int cpu = cpus[static_cast<size_t>(id) % cpus.size()];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    throw RunError(fmt::format("loader worker {}: cannot pin it to CPU {} (loader.pin_workers): {}",
                               id, cpu, std::strerror(errno)));
  }
}

// Reaps a child, killing it when it does not exit within the grace period.
std::string reap_process(pid_t pid) noexcept {
  int status = 0;
  if (wait_until(pid, monotonic_ns() + kExitGraceNs, status)) return describe_status(status);
  ::kill(pid, SIGKILL);
  if (wait_until(pid, monotonic_ns() + kExitGraceNs, status)) return describe_status(status);
  return "did not exit, even after SIGKILL (left to the kernel)";
}

}  // namespace

void run_worker_loop(const Config& config, const Dataset& dataset, const SlotRing& ring, int id,
                     int task_fd, int done_fd) {
  if (config.loader.pin_workers) pin_to_cpu(id);
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
  try {
    for (int id = 0; id < workers; ++id)
      start(id);
  } catch (...) {
    stop_all();  // a pool that could not start (pipe2 or fork failed) leaves nothing running
    throw;
  }
}

void WorkerPool::start(int id) {
  Worker& w = workers_[id];
  make_task_channel(w.task_read, w.task_write);
  make_pipe(w.done_read, w.done_write);
  if (mode_ == WorkerMode::process) {
    start_process(id);
  } else {
    start_thread(id);
  }
}

// The thread owns its channel ends and its error slot, never this pool's Worker: a stuck thread
// is detached when the pool goes (~WorkerPool), and must not then touch the pool, nor find its
// descriptors closed under it (their numbers reused by another open).
void WorkerPool::start_thread(int id) {
  Worker& w = workers_[id];
  w.thread_error = std::make_shared<std::string>();
  w.thread = std::thread([&config = config_, &dataset = dataset_, &ring = ring_, id,
                          task = w.task_read, done = w.done_write, error = w.thread_error] {
    try {
      run_worker_loop(config, dataset, ring, id, task, done);
    } catch (const std::exception& e) {
      *error = e.what();
    }
    ::close(task);
    ::close(done);  // the last act: closing the done pipe is how main learns this worker stopped
  });
  w.task_read = w.done_write = -1;
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
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw_errno("fork of loader worker", std::to_string(id));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);   // never outlive the main process
    if (getppid() != parent) _exit(1);  // it died before prctl took effect
    // Ctrl-C and `kill -TERM <group>` are the main process's to handle: it stops gracefully and
    // reaps its workers itself.
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
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
  stop_all();
}

void WorkerPool::stop_all() noexcept {
  for (auto& w : workers_) {
    close_fd(w.task_write);  // EOF: workers finish their batch and leave
    close_fd(w.task_read);   // still here only when start() failed between its pipes
    close_fd(w.done_write);
  }
  const int64_t deadline = monotonic_ns() + kExitGraceNs;
  for (auto& w : workers_) {
    if (w.thread.joinable()) {
      // A thread cannot be killed: one that does not close its done pipe in time (a hung decode)
      // is detached rather than joined, so that mmprof never hangs on it. It keeps its own
      // descriptors; it still refers to the loader's configuration, dataset and ring, so a stuck
      // thread ends the run (Loader throws) and the process is expected to exit.
      bool closed = w.done_read < 0;
      while (!closed && monotonic_ns() < deadline) {
        pollfd p{w.done_read, POLLIN, 0};
        if (poll(&p, 1, 10) < 0 && errno != EINTR) break;
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          char drain[256];
          closed = ::read(w.done_read, drain, sizeof drain) == 0;
        }
      }
      if (closed) {
        w.thread.join();
      } else {
        w.thread.detach();
      }
    }
    if (w.pid > 0) {
      // A worker in the middle of a big video gets a moment, then is killed.
      int status = 0;
      if (!wait_until(w.pid, deadline, status)) {
        ::kill(w.pid, SIGKILL);
        wait_until(w.pid, monotonic_ns() + kExitGraceNs, status);
      }
    }
    close_fd(w.done_read);
  }
}

bool WorkerPool::dispatch(int worker, uint32_t slot) {
  const int fd = workers_[worker].task_write;
  const auto* p = reinterpret_cast<const char*>(&slot);
  size_t left = sizeof slot;
  while (fd >= 0 && left > 0) {
    const ssize_t r = ::send(fd, p, left, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    left -= static_cast<size_t>(r);
  }
  return fd >= 0;
}

void WorkerPool::wait_completions(int timeout_ms, std::vector<std::pair<int, uint32_t>>& done,
                                  std::vector<WorkerExit>& exits) {
  std::vector<pollfd> fds(workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i)
    fds[i] = {workers_[i].done_read, POLLIN, 0};  // a stopped worker's -1 is ignored by poll
  const int n = poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0 && errno != EINTR) throw_errno("poll on", "the loader's done pipes");
  for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    // Slot ids are written 4 bytes at a time (atomic below PIPE_BUF), so a read returns whole
    // ids; 0 bytes is the EOF of a worker that stopped, after everything it completed.
    uint32_t ids[64];
    const ssize_t r = ::read(fds[i].fd, ids, sizeof ids);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) {
      exits.push_back(reap(static_cast<int>(i)));
      continue;
    }
    for (size_t k = 0; k < static_cast<size_t>(r) / sizeof(uint32_t); ++k)
      done.emplace_back(static_cast<int>(i), ids[k]);
  }
}

WorkerExit WorkerPool::reap(int worker) {
  Worker& w = workers_[worker];
  close_fd(w.task_write);
  close_fd(w.done_read);
  WorkerExit exit{worker, w.pid, ""};
  if (w.pid > 0) {
    exit.how = reap_process(w.pid);
    w.pid = 0;
  } else {
    if (w.thread.joinable()) w.thread.join();  // it closed its done pipe as its last act
    exit.how = "stopped: " + (w.thread_error == nullptr || w.thread_error->empty()
                                  ? std::string("no error given")
                                  : *w.thread_error);
  }
  return exit;
}

WorkerExit WorkerPool::kill(int worker) {
  Worker& w = workers_[worker];
  if (w.pid <= 0) {
    throw RunError(fmt::format(
        "loader worker thread {} is stuck and a thread cannot be stopped from outside; use "
        "loader.worker_mode=process to have stuck workers replaced",
        worker));
  }
  ::kill(w.pid, SIGKILL);
  return reap(worker);
}

void WorkerPool::restart(int worker) {
  start(worker);
}

std::vector<int> WorkerPool::pids() const {
  std::vector<int> out;
  for (const auto& w : workers_) {
    if (w.pid > 0) out.push_back(w.pid);
  }
  return out;
}

}  // namespace mmprof
