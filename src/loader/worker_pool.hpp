#pragma once
// Worker processes (forked, like PyTorch's DataLoader on Linux) or threads, each with a task pipe
// and a done pipe carrying 4-byte slot ids; the batches themselves stay in the shared ring.
#include <cstdint>
#include <thread>
#include <vector>

#include "loader/batch_slot.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

class WorkerPool {
 public:
  WorkerPool(const Config& config, const Dataset& dataset, const SlotRing& ring, int workers,
             WorkerMode mode);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const noexcept { return static_cast<int>(workers_.size()); }
  void dispatch(int worker, uint32_t slot);
  // Appends the slots completed within timeout_ms to `done` (with the worker that filled each).
  // Throws RunError naming the worker, its pid and its exit status when one has died.
  void wait_completions(int timeout_ms, std::vector<std::pair<int, uint32_t>>& done);
  std::vector<int> pids() const;

 private:
  struct Worker {
    int task_write = -1, task_read = -1;  // main writes slot ids, worker reads
    int done_write = -1, done_read = -1;  // worker writes slot ids, main reads
    int pid = 0;                          // process mode
    std::thread thread;                   // thread mode
  };
  [[noreturn]] void report_death(int worker);
  void start_process(int id);
  void close_other_fds(int keep) noexcept;

  const Config& config_;
  const Dataset& dataset_;
  const SlotRing& ring_;
  WorkerMode mode_;
  std::vector<Worker> workers_;
};

// The loop every worker runs (in a child process or a thread) until its task pipe closes.
void run_worker_loop(const Config& config, const Dataset& dataset, const SlotRing& ring, int id,
                     int task_fd, int done_fd);

}  // namespace mmprof
