#pragma once
// Worker processes (forked, like PyTorch's DataLoader on Linux) or threads, each with a task
// channel and a done pipe carrying 4-byte slot ids; the batches themselves stay in the shared
// ring. A worker that dies is reported (reaped within a bounded time), never waited on forever;
// the loader decides whether to restart() it.
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "loader/batch_slot.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

// A worker that stopped: which, its pid (0 for a thread) and how ("was killed by signal 9
// (Killed)", "exited with status 1", "stopped: <exception>").
struct WorkerExit {
  int worker = -1;
  int pid = 0;
  std::string how;
};

class WorkerPool {
 public:
  WorkerPool(const Config& config, const Dataset& dataset, const SlotRing& ring, int workers,
             WorkerMode mode);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const noexcept { return static_cast<int>(workers_.size()); }
  // Queues a slot for a worker. False when the worker is gone: its exit is then reported by the
  // next wait_completions().
  bool dispatch(int worker, uint32_t slot);
  // Appends the slots completed within timeout_ms (with the worker that filled each) to `done`,
  // and the workers that stopped to `exits` (reaped). A stopped worker stays so until restart().
  void wait_completions(int timeout_ms, std::vector<std::pair<int, uint32_t>>& done,
                        std::vector<WorkerExit>& exits);
  // Ends a worker that holds a batch too long: SIGKILL and reap (process mode). A thread cannot be
  // stopped from outside: throws RunError saying so.
  WorkerExit kill(int worker);
  // Starts a fresh worker in place of a stopped one: new pipes, a new process or thread.
  void restart(int worker);
  std::vector<int> pids() const;

 private:
  struct Worker {
    int task_write = -1, task_read = -1;  // main writes slot ids, worker reads
    int done_write = -1, done_read = -1;  // worker writes slot ids, main reads
    int pid = 0;                          // process mode
    std::thread thread;                   // thread mode
    // Why a worker thread stopped (set before its done pipe closes; shared with the thread).
    std::shared_ptr<std::string> thread_error;
  };
  void start(int id);
  void start_process(int id);
  void start_thread(int id);
  WorkerExit reap(int worker);
  // Ends every worker (~WorkerPool, or a constructor that failed part way).
  void stop_all() noexcept;
  void close_other_fds(int keep) noexcept;

  const Config& config_;
  const Dataset& dataset_;
  const SlotRing& ring_;
  WorkerMode mode_;
  std::vector<Worker> workers_;
};

// The loop every worker runs (in a child process or a thread) until its task channel closes.
void run_worker_loop(const Config& config, const Dataset& dataset, const SlotRing& ring, int id,
                     int task_fd, int done_fd);

}  // namespace mmprof
