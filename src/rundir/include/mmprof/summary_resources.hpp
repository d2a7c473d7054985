#pragma once
// summary.json's memory, cpu, io and errors parts as types (mmprof/summary.hpp holds them): what
// the resource sampler measured of the run's processes and host (measure/resource_summary.cpp
// fills them for both producers, mmprof's loader and a user's job), and the failed samples. A
// figure the sampler could not read is empty (null in the file, "not measured"), never 0. How
// each is measured and cross-checked: docs/metrics.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof {

// A distribution: of times (ms) in latency_ms, of MB/s for the GPU's copies. Its figures are
// empty ("not measured", null in the file) when it has no value (count 0). p999 is written for
// the step figures, not for the stages or the copies.
struct TimeSpread {
  size_t count = 0;
  std::optional<double> mean, p50, p90, p99, p999, max;
};

// One process's memory peaks over the whole run (MiB, sampled: a spike shorter than the sampling
// interval can be missed).
struct ProcessMemory {
  int pid = 0;
  // main (mmprof's, or a rank's of a user's job), worker (a DataLoader or mmprof worker), external
  // (another process of the job), or what else observed it (a job's agent, mmprof itself).
  std::string role = "main";
  std::optional<double> rss_peak_mib, pss_peak_mib, uss_peak_mib, swap_peak_mib;
  int index = -1;     // a worker's slot
  std::string comm;   // a process that is neither main nor a worker: its name
  std::string phase;  // a worker's or other process's: the phase it was first seen in
  std::optional<int> rank;
  // A user's job: a worker's DataLoader (its construction order in its main process) and that
  // main process.
  std::optional<int> loader, main_pid;
};

// memory: peaks over the whole run ("window": "run"), warm-up and phase boundaries included.
struct MemoryPeaks {
  // false: no sampler ran; the part says so with nulls (main, workers, host and PSS peaks only).
  bool sampled = false;
  int samples = 0, interval_ms = 0;
  std::optional<ProcessMemory> main;  // rank 0's for a job of several ranks
  std::vector<ProcessMemory> mains;   // every rank's main, when there are several
  std::vector<ProcessMemory> workers, external;
  std::optional<double> total_pss_peak_mib;  // of every process at once
  std::optional<double> host_peak_mib;       // the run's cgroup, else the host's used memory
  std::string host_peak_source;
  std::optional<double> host_used_peak_mib, host_total_mib, page_cache_peak_mib;
  std::optional<double> cgroup_memory_current_peak_mib, cgroup_memory_peak_mib, shm_used_peak_mib;
  std::string sampler_error;  // why sampling stopped, when it did

  // The largest swap peak of the main process and the workers (0 when none was read).
  double swap_peak_mib() const;
};

// One process's CPU over a window.
struct ProcessCpu {
  int pid = 0;
  std::string role;
  int index = -1;  // a worker's slot
  double cpu_s = 0;
  std::optional<double> cores;  // cpu_s over the window's wall time
  std::optional<double> run_queue_delay_s, run_queue_delay_fraction, observed_fraction;
};

// The CPUs the run may use, over the window: everyone's time on them, mmprof's included.
struct HostCpuShare {
  int cpus = 0;
  std::vector<int> cpu_ids;
  double busy_fraction = 0, idle_fraction = 0, busy_cores = 0, others_busy_cores = 0;
  std::optional<double> steal_fraction, iowait_fraction;
  std::string source;
};

// PSI (host-wide): the share of the window in which some (all) runnable tasks waited for a CPU.
struct CpuPressure {
  bool available = false;
  std::optional<double> some_fraction, full_fraction;
  std::string source;  // available
  std::string reason;  // not available
};

// Run-queue delay of the workers (mean and worst slot) and the main process, over the window.
struct RunQueueDelay {
  std::optional<double> workers_mean_fraction, workers_max_fraction, main_fraction;
  std::string source;
};

struct CpuWindow {
  std::string window;
  bool complete = false;  // false: the run stopped inside it
  double wall_s = 0, cpu_s = 0;
  std::optional<double> utilization_cores;
  std::vector<ProcessCpu> per_process;
  std::optional<HostCpuShare> host;
  CpuPressure pressure;
  std::optional<RunQueueDelay> run_queue_delay;
};

// cpu: the figures of the top window (the pipeline phase's, else the whole run's) and of each
// measured window (a window that never opened is empty, null in the file).
struct CpuUse {
  bool sampled = false;                   // false: no sampler ran
  std::optional<CpuWindow> top;           // empty: neither the top window nor the run's opened
  std::optional<double> effective_cores;  // the CPUs the run may use
  std::string effective_cores_source;
  std::map<std::string, std::optional<CpuWindow>, std::less<>> phases;

  // The window named `name`; nullptr when it never opened or the run has none of that name.
  const CpuWindow* phase(std::string_view name) const;
  // The top window's parts; nullptr when it (or the part) was not measured.
  const HostCpuShare* host() const;
  const RunQueueDelay* run_queue_delay() const;
  // The top window's figure of `part` (e.g. &CpuWindow::utilization_cores); empty without one.
  std::optional<double> top_figure(std::optional<double> CpuWindow::*part) const {
    return top ? (*top).*part : std::nullopt;
  }
};

struct IoWindow {
  std::string window;
  bool complete = false;
  double wall_s = 0;
  std::optional<uint64_t> read_bytes, write_bytes, rchar, wchar, syscr, syscw;
  std::optional<double> read_mb_per_s, rchar_mb_per_s;
  int64_t minflt = 0, majflt = 0;
  std::optional<double> minflt_per_sample, majflt_per_sample;  // empty: samples not counted
};

// io: as cpu, the top window's figures and each window's.
struct IoUse {
  bool sampled = false;
  std::optional<IoWindow> top;
  std::map<std::string, std::optional<IoWindow>, std::less<>> phases;

  // The top window's figure of `part` (e.g. &IoWindow::read_mb_per_s); empty without one.
  std::optional<double> top_figure(std::optional<double> IoWindow::*part) const {
    return top ? (*top).*part : std::nullopt;
  }
  // The top window's major faults; empty without one.
  std::optional<double> majflt() const {
    return top ? std::optional<double>(static_cast<double>(top->majflt)) : std::nullopt;
  }
};

// gpu: what CUPTI and CUDA events measured over the measured steps' windows (measure/gpu_block).
struct GpuWindow {
  std::string phase;  // end_to_end
  int64_t steps = 0;
  double ms = 0;  // the union of the measured steps
  std::string what;
};

// The batches' copies timed by CUDA events around them: an independent check of CUPTI's figures,
// and the only H2D figures when CUPTI is unavailable.
struct H2DEventCopies {
  int64_t copies = 0, pinned_copies = 0;
  uint64_t bytes = 0;
  std::optional<double> mb_per_s;
  TimeSpread per_copy_mb_per_s;  // MB/s of each copy
};

struct GpuH2D {
  std::optional<double> mb_per_s_pinned, mb_per_s_pageable;  // CUPTI's memcpy records
  std::optional<uint64_t> bytes;
  int64_t copies = 0;
  H2DEventCopies cuda_events;
};

struct CuptiState {
  std::string unavailable;  // why CUPTI could not trace; empty when it did
  uint64_t dropped_records = 0, incomplete_records = 0;
  std::string clock_method;
};

struct GpuEventCounts {
  int64_t kernels = 0, memcpys = 0, memsets = 0, synchronizations = 0;
};

struct GpuFigures {
  GpuWindow window;
  GpuH2D h2d;
  CuptiState cupti;
  // Fractions of the window; empty when CUPTI was unavailable or the window empty.
  std::optional<double> idle_fraction, data_wait_idle_fraction, other_idle_fraction;
  std::optional<double> kernel_busy_fraction, copy_compute_overlap_fraction;
  // What CUPTI traced; empty when it was unavailable (busy_ms and idle_ms with it).
  std::optional<GpuEventCounts> events;
  double busy_ms = 0, idle_ms = 0;
};

// errors: the error events of the run (a sample can fail in every epoch) and the distinct samples
// they fell on (empty: a run from before mmprof counted them).
struct ErrorTally {
  int64_t count = 0;
  std::optional<int64_t> samples = 0;
};

}  // namespace mmprof
