#pragma once
// Samples the whole process tree of a run (main, the loader's workers, any other descendant) and
// the host, every `interval_ms` on its own thread and on demand at phase boundaries. Each
// snapshot goes to a sink (the runner writes resources.csv and host.csv) and into a
// ResourceUsage, the aggregate summary.json is built from.
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe/clock.hpp"
#include "probe/procfs.hpp"
#include "probe/resource_usage.hpp"

namespace mmprof {

class ResourceSampler {
 public:
  using Sink = std::function<void(const Snapshot&)>;
  struct Options {
    int interval_ms = 100;  // 0: no periodic samples, only the ones asked for
    int root_pid = 0;       // 0: this process
    // smaps_rollup (PSS, USS) walks page tables: about 240 us per 64 MB resident. Periodic
    // samples read it only while its cost stays under this share of one core; the others take
    // RSS from statm and leave PSS/USS empty. Samples asked for (phase boundaries) always read it.
    double smaps_cpu_share = 0.005;
    // The role of the root process: "main" for mmprof's own loader, kObserverRole when the tree
    // is a user's job that mmprof launched.
    std::string root_role = "main";
    // The CPUs whose /proc/stat lines make host.cpu; empty: those this process may run on.
    std::vector<int> host_cpus{};
  };

  // What a process of a user's job is, as the job's hook reports it (its main process per rank,
  // a DataLoader worker, torchrun's agent): overrides worker/external for that pid.
  struct Role {
    std::string role;
    int worker = -1;
    std::optional<int> rank;
  };

  // `fs` and `clock` must outlive the sampler. `sink` is called with the sampler's lock held,
  // so rows from the thread and from sample_now() never interleave.
  ResourceSampler(const procfs::ProcFs& fs, Clock& clock, const Options& options, Sink sink);
  ~ResourceSampler() noexcept;
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Takes the first sample (label "start"), opens the window "run" and starts the thread.
  void start();
  // Stops and joins the thread, takes the last sample (label "stop"), closes "run". Idempotent.
  void stop() noexcept;

  // The loader's current worker pids, index = position. Pids seen before keep their index.
  void set_workers(const std::vector<int>& pids);
  // Labels `pid` from the next sample on (it is sampled once a pass over /proc found it in the
  // tree).
  void set_role(int pid, Role role);
  // Written into every following snapshot.
  void set_phase(const std::string& phase);

  // `scan`: find the tree by a pass over /proc (else as periodic samples between passes do).
  void sample_now(const std::string& label, bool scan = true);
  // A sample that opens (closes) the window `name`: CPU, I/O and faults are measured between them.
  void begin_window(const std::string& name);
  void end_window(const std::string& name);

  ResourceUsage usage() const;
  Snapshot last_snapshot() const;

 private:
  Snapshot collect(const std::string& label, bool scan, bool periodic);
  // The tree: by a pass over every process (scan), else the members found by the last pass and
  // the workers named since, each re-read and checked to be the same process.
  std::vector<procfs::ProcStat> members(bool scan);
  ProcessSample read_process(const procfs::ProcStat& st, bool with_smaps);
  // Refills the time budget for reading smaps_rollup in periodic samples (a share of real time).
  void refill_smaps_budget();
  // Collects, aggregates and hands a snapshot to the sink; never throws (errors are recorded).
  void take(const std::string& label, const std::string& begin, const std::string& end, bool scan,
            bool periodic = false) noexcept;
  // The thread's body; `guard` (the fork guard) is held except while parked in the timed wait.
  void loop(std::unique_lock<std::mutex>& guard);

  const procfs::ProcFs& fs_;
  Clock& clock_;
  const Options options_;
  const Sink sink_;
  const double ticks_per_s_;
  procfs::Cgroup cgroup_;

  mutable std::mutex mutex_;  // guards everything below, and the sink
  std::condition_variable wake_;
  bool stop_requested_ = false;
  bool started_ = false, stopped_ = false;
  std::string phase_ = "setup";
  std::map<int, int> worker_index_;
  std::map<int, Role> roles_;
  std::map<int, uint64_t> known_;  // descendants found by the last pass: pid -> start time
  int periodic_since_scan_ = 0;
  int64_t smaps_budget_ns_ = 0, budget_refilled_ns_ = 0;
  // pid -> the sample count when its smaps_rollup was last read: a periodic sample reads the
  // longest unread first (a new worker before the main process read again).
  std::map<int, int64_t> smaps_read_at_;
  int64_t samples_ = 0;
  ResourceUsage usage_;
  Snapshot last_;
  std::thread thread_;
};

}  // namespace mmprof
