#pragma once
// What the resource sampler saw, and the aggregate summary.json needs: per-process memory peaks,
// the peak of the tree's summed PSS, host peaks, and per-window CPU, I/O and page-fault deltas.
// Pure data and pure logic: fed Snapshots (from procfs, or built by hand in tests).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/procfs.hpp"

namespace mmprof {

// The role of mmprof itself when it samples a user's job (the tree's root, not the job's).
inline constexpr const char* kObserverRole = "observer";

// One process at one instant.
struct ProcessSample {
  int pid = 0;
  uint64_t starttime_ticks = 0;
  std::string role;         // main | worker | external; for a user's job also agent | observer
  int worker = -1;          // the loader's worker index for role worker
  std::optional<int> rank;  // a user's job: the rank (RANK) the process belongs to
  std::string comm;
  char state = '?';
  procfs::Smaps mem;  // empty fields for a zombie or an unreadable smaps_rollup
  double utime_s = 0, stime_s = 0;
  int64_t minflt = 0, majflt = 0;
  procfs::ProcIo io;                       // empty fields when /proc/PID/io is unreadable
  std::optional<procfs::SchedStat> sched;  // summed over its threads; empty when unreadable

  double cpu_s() const { return utime_s + stime_s; }
};

// CPU time of the host's CPUs that the run may use (/proc/stat), in CPU-seconds summed over them:
// everyone's, not only the run's. iowait and steal are empty on kernels that lack them.
struct HostCpu {
  int cpus = 0;
  double busy_s = 0, idle_s = 0;
  std::optional<double> iowait_s, steal_s;
  double total_s() const { return busy_s + idle_s + iowait_s.value_or(0) + steal_s.value_or(0); }
};

// `times` (parse_cpu_times) summed over `cpu_ids`; all CPUs (the "cpu" line) when none of them
// is listed or `cpu_ids` is empty. Empty when /proc/stat gave nothing.
std::optional<HostCpu> sum_cpus(const std::map<int, procfs::CpuTimes>& times,
                                const std::vector<int>& cpu_ids, double ticks_per_s);

struct HostSample {
  procfs::MemInfo mem;
  std::optional<int64_t> cgroup_current_bytes, cgroup_peak_bytes;
  std::optional<uint64_t> shm_used_bytes;
  std::optional<HostCpu> cpu;
  std::optional<procfs::Pressure> cpu_pressure;  // empty without PSI
};

// Everything read at one sampling instant.
struct Snapshot {
  int64_t t_ns = 0;
  std::string phase;  // what the run was doing (set by the runner)
  std::string label;  // empty for periodic samples; e.g. "pipeline_begin" at a phase boundary
  std::vector<ProcessSample> processes;
  HostSample host;
};

// A process is (pid, start time): a recycled pid is another process.
struct ProcessKey {
  int pid = 0;
  uint64_t starttime_ticks = 0;
  auto operator<=>(const ProcessKey&) const = default;
};

struct ProcessPeaks {
  int pid = 0;
  std::string role, comm;
  int worker = -1;
  std::optional<int> rank;
  std::string first_phase;  // the phase in which it was first seen
  std::optional<int64_t> rss_kb, pss_kb, uss_kb, swap_kb;
};

// What one process used during a window (differences of cumulative counters).
struct ProcessUse {
  int pid = 0;
  std::string role;
  int worker = -1;
  double cpu_s = 0;
  int64_t minflt = 0, majflt = 0;
  procfs::ProcIo io;
  std::optional<double> run_queue_delay_s;  // waiting for a CPU while runnable (schedstat)
  // Wall seconds of the window in which samples saw it: from the window's first sample (or its
  // first sighting, born inside) to its last sighting. Less than the window's wall for a process
  // that ended inside it (a worker whose epoch was done): its use covers only that part.
  double observed_s = 0;
};

struct WindowUse {
  std::string name;
  bool closed = false;  // false: the run stopped inside it, figures go to its last sample
  int64_t t_begin_ns = 0, t_end_ns = 0;
  int snapshots = 0;
  std::vector<ProcessUse> processes;
  std::optional<HostCpu> host_cpu;  // CPU-seconds the host's CPUs spent in the window
  // PSI: wall seconds in which some (all) runnable tasks waited for a CPU. `pressure_read`:
  // /proc/pressure/cpu was there at both ends of the window.
  bool pressure_read = false;
  std::optional<double> pressure_some_s, pressure_full_s;
  double wall_s() const { return static_cast<double>(t_end_ns - t_begin_ns) / 1e9; }
  double cpu_s() const;
  int64_t minflt() const;
  int64_t majflt() const;
  // Sums over processes whose counter was readable; a field stays empty when none was.
  procfs::ProcIo io() const;
};

struct HostPeaks {
  std::optional<int64_t> mem_total_kb;
  std::optional<int64_t> used_peak_kb;  // max of MemTotal - MemAvailable over samples
  std::optional<int64_t> cached_peak_kb;
  std::optional<int64_t> cgroup_current_peak_bytes;  // max of sampled memory.current
  std::optional<int64_t> cgroup_peak_bytes;          // memory.peak at the last sample
  std::optional<uint64_t> shm_used_peak_bytes;
};

// Facts read once when sampling starts.
struct SamplerFacts {
  int interval_ms = 0;
  std::optional<double> cgroup_cpu_quota_cores;
  int affinity_cpus = 1;
  std::vector<int> host_cpu_ids;  // the CPUs host.cpu covers (empty: all of them)
};

class ResourceUsage {
 public:
  // The next snapshot added is the window's first; it measures from there.
  void begin_window(const std::string& name);
  // The window ends at the last snapshot added.
  void end_window(const std::string& name);
  void add(const Snapshot& s);

  // In order of first appearance.
  const std::vector<ProcessPeaks>& processes() const noexcept { return peaks_; }
  std::optional<int64_t> total_pss_peak_kb() const noexcept { return total_pss_peak_kb_; }
  const HostPeaks& host() const noexcept { return host_; }
  int snapshots() const noexcept { return snapshots_; }
  // Empty when the window never began.
  std::optional<WindowUse> window(const std::string& name) const;

  SamplerFacts facts;
  std::string error;  // the first sampling error, when one happened

 private:
  struct Track {
    ProcessSample first, last;          // first: zeros for a process born inside the window
    int64_t first_ns = 0, last_ns = 0;  // the samples that saw it first and last in the window
  };
  struct Window {
    bool pending = true, closed = false;
    int64_t t_begin_ns = 0, t_end_ns = 0;
    int snapshots = 0;
    HostSample host_first, host_last;
    std::map<ProcessKey, Track> tracks;
    std::vector<ProcessKey> order;
  };
  void add_peaks(const Snapshot& s);
  static void add_to_window(Window& w, const Snapshot& s);

  std::vector<ProcessPeaks> peaks_;
  std::map<ProcessKey, size_t> peak_index_;
  std::optional<int64_t> total_pss_peak_kb_;
  HostPeaks host_;
  int snapshots_ = 0;
  std::map<std::string, Window> windows_;
};

}  // namespace mmprof
