#pragma once
// The only parsers of procfs, cgroup, sysfs and /etc text: pure functions of a file's content,
// used by the resource sampler (probe/procfs.hpp) and the inventory (env/). They tolerate missing
// fields (kernels and architectures differ): absent means nullopt or empty, never a made-up 0.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::procfs {

// /proc/PID/smaps_rollup, in kB. Pss_Anon/File/Shmem appeared in Linux 5.1; SwapPss in 4.3.
struct Smaps {
  std::optional<int64_t> rss_kb, pss_kb, pss_anon_kb, pss_file_kb, pss_shmem_kb;
  std::optional<int64_t> shared_clean_kb, shared_dirty_kb, private_clean_kb, private_dirty_kb;
  std::optional<int64_t> swap_kb, swap_pss_kb;
  // Unique set size: pages mapped by this process alone (Private_Clean + Private_Dirty).
  std::optional<int64_t> uss_kb() const;
};

// /proc/PID/stat: the fields mmprof uses. Times are in clock ticks (sysconf(_SC_CLK_TCK)).
struct ProcStat {
  int pid = 0;
  std::string comm;
  char state = '?';
  int ppid = 0;
  uint64_t minflt = 0, majflt = 0;
  uint64_t utime_ticks = 0, stime_ticks = 0;
  uint64_t starttime_ticks = 0;  // since boot: with the pid, it names one process (pids recycle)
  int num_threads = 0;           // field 20
};

// One CPU line of /proc/stat ("cpu" for all CPUs, "cpuN"), in clock ticks (USER_HZ). iowait
// appeared in Linux 2.5.41, steal in 2.6.11: `fields` says how many the line had. guest and
// guest_nice are already counted in user and nice, so they are not read.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  int fields = 0;
  // Running anything (the kernel's own work included) but not stolen by a hypervisor.
  uint64_t busy() const { return user + nice + system + irq + softirq; }
  uint64_t total() const { return busy() + idle + iowait + steal; }
  bool has_iowait() const { return fields >= 5; }
  bool has_steal() const { return fields >= 8; }
  CpuTimes& operator+=(const CpuTimes& o);
};

// /proc/PID/schedstat (and /proc/PID/task/TID/schedstat): time on a CPU, time waiting on a run
// queue while runnable (sched_info.run_delay), and the number of time slices run.
struct SchedStat {
  uint64_t run_ns = 0, wait_ns = 0, timeslices = 0;
  SchedStat& operator+=(const SchedStat& o);
};

// /proc/pressure/cpu (PSI, Linux 4.20): "some" is the time in which at least one runnable task
// waited for a CPU; "full" (all non-idle tasks stalled) appeared for cpu in Linux 5.13.
struct Pressure {
  std::optional<double> some_avg10_pct, full_avg10_pct;
  std::optional<uint64_t> some_total_us, full_total_us;
};

// /proc/PID/io. Missing when the kernel lacks task I/O accounting or the file is unreadable.
struct ProcIo {
  std::optional<uint64_t> rchar, wchar, syscr, syscw, read_bytes, write_bytes;
};

// /proc/stat's CPU lines: key -1 is the "cpu" line (all CPUs), N is "cpuN". Other lines are
// skipped; a line with fewer than the four fields every kernel has is left out.
std::map<int, CpuTimes> parse_cpu_times(std::string_view text);
// Empty when the text is not "RUN WAIT SLICES".
std::optional<SchedStat> parse_schedstat(std::string_view text);
// Empty when neither a "some" nor a "full" line is there.
std::optional<Pressure> parse_pressure(std::string_view text);

// /proc/meminfo, in kB.
struct MemInfo {
  std::optional<int64_t> mem_total_kb, mem_available_kb, cached_kb, shmem_kb;
  std::optional<int64_t> huge_pages_total, huge_pages_free, huge_page_kb;  // the hugetlbfs pool
};

// The cgroup v2 group of this process, and what its files say (each optional on its own:
// memory.peak needs Linux 5.19, cpu.max exists only with the cpu controller enabled).
struct Cgroup {
  std::optional<std::filesystem::path> dir;  // <cgroup root>/<path>, when found
  std::optional<int64_t> memory_current_bytes, memory_peak_bytes;
  std::optional<double> cpu_quota_cores;  // cpu.max quota / period; empty when "max"
};

// A filesystem's usage (statvfs), e.g. /dev/shm where shared-memory batch rings live.
struct FsUsage {
  std::optional<uint64_t> used_bytes, total_bytes;
};

Smaps parse_smaps_rollup(std::string_view text);
// /proc/PID/statm: the resident set in kB (second field, in pages). Empty when malformed.
std::optional<int64_t> parse_statm_rss_kb(std::string_view text, int64_t page_kb);
// Empty when the text is not a stat line. comm may hold spaces and ')': it runs from the first
// '(' to the last ')'.
std::optional<ProcStat> parse_stat(std::string_view text);
ProcIo parse_io(std::string_view text);
MemInfo parse_meminfo(std::string_view text);
// The v2 entry ("0::/path") of /proc/PID/cgroup; empty on a pure cgroup v1 system.
std::optional<std::string> parse_cgroup_v2_path(std::string_view text);
// cpu.max ("QUOTA PERIOD" or "max PERIOD") -> cores; empty when unlimited or malformed.
std::optional<double> parse_cpu_max(std::string_view text);

// A file that holds one integer (cgroup memory.current, memory.peak).
std::optional<int64_t> parse_single_int(std::string_view text);

// /proc/cpuinfo: the model name (x86 "model name", ARM "Hardware"/"Processor"/"CPU part"), the
// logical CPU count and the distinct "physical id"s (sockets; 0 when the kernel omits them).
struct CpuInfo {
  std::string model;
  int logical_cpus = 0;
  int sockets = 0;
  std::string flags_note;  // "avx2 avx512f ..." subset relevant to decode speed, when listed
};
CpuInfo parse_cpuinfo(std::string_view text);

// /etc/os-release: KEY=value lines, values optionally quoted ("..." or '...').
std::map<std::string, std::string> parse_os_release(std::string_view text);

// One line of /proc/self/mountinfo (proc(5)); octal escapes (\040 for a space) decoded.
struct MountEntry {
  int major = 0, minor = 0;
  std::string root;         // the mounted subtree of the source filesystem
  std::string mount_point;  // absolute
  std::string fs_type;      // "ext4", "overlay", "nfs4", ...
  std::string source;       // "/dev/nvme0n1p2", "overlay", "server:/export", ...
};
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// The mount that holds absolute `path`: the longest mount point that is `path` or a parent
// directory of it (component-wise, so /data2 is not under /data); among equal mount points the
// last one listed, which is the one stacked on top. nullptr when nothing matches.
const MountEntry* find_mount(const std::vector<MountEntry>& mounts, std::string_view path);

// /proc/net/dev: cumulative bytes and packets per interface.
struct NetCounters {
  uint64_t rx_bytes = 0, rx_packets = 0, tx_bytes = 0, tx_packets = 0;
};
std::map<std::string, NetCounters> parse_net_dev(std::string_view text);

// "KEY=value" lines (sysfs uevent files).
std::map<std::string, std::string> parse_key_values(std::string_view text);

}  // namespace mmprof::procfs
