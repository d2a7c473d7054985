#pragma once
// The process tree and host figures the resource sampler reads: procfs, cgroup v2 files and
// /dev/shm under injectable roots, so tests use copied fixture files. Parsing is in
// probe/proc_parse.hpp; files are read with probe/host_files.hpp's read_small_file.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/proc_parse.hpp"

namespace mmprof::procfs {

double clock_ticks_per_s() noexcept;
// CPUs this process may run on (sched_getaffinity), at least 1.
int affinity_cpus() noexcept;
// Their ids; empty when sched_getaffinity fails.
std::vector<int> affinity_cpu_ids();

struct Roots {
  std::filesystem::path proc = "/proc";
  std::filesystem::path cgroup = "/sys/fs/cgroup";
  std::filesystem::path shm = "/dev/shm";
};

// Reads the files under `roots`. Every method tolerates a process that has exited (empty result).
class ProcFs {
 public:
  ProcFs() = default;
  explicit ProcFs(Roots roots) : roots_(std::move(roots)) {}

  std::optional<ProcStat> stat(int pid) const;
  std::optional<Smaps> smaps(int pid) const;
  // RSS alone from /proc/PID/statm: a counter read, where smaps_rollup walks the page tables.
  std::optional<int64_t> statm_rss_kb(int pid) const;
  std::optional<ProcIo> io(int pid) const;
  // Summed over the process's threads (/proc/PID/task/*/schedstat): /proc/PID/schedstat is its
  // main thread's alone. `threads` (stat's num_threads) 1 reads that one file instead of the
  // task directory. A thread that ended is no longer in the sum.
  std::optional<SchedStat> schedstat(int pid, int threads) const;
  // /proc/stat's "cpu" line (key -1) and one per CPU; empty when unreadable.
  std::map<int, CpuTimes> cpu_times() const;
  // /proc/pressure/cpu; empty when the kernel has no PSI (before 4.20, or booted with psi=0).
  std::optional<Pressure> cpu_pressure() const;
  MemInfo meminfo() const;
  // The group of `self`; its files are re-read on every call, the path once per call.
  Cgroup cgroup() const;
  // memory.current and memory.peak of an already found group directory.
  void read_cgroup_memory(Cgroup& cg) const;
  FsUsage shm() const;
  // Every process (numeric entries of the proc root) with its stat line; the ones that exit
  // while being listed are left out.
  std::vector<ProcStat> all_processes() const;

  const Roots& roots() const noexcept { return roots_; }

 private:
  Roots roots_;
};

// The descendants of `root` (not root itself) among `processes`, by following ppid links.
std::vector<const ProcStat*> descendants(const std::vector<ProcStat>& processes, int root);

}  // namespace mmprof::procfs
