#pragma once
// The only code that reads procfs, cgroup v2 files and /dev/shm. Parsers are pure functions over
// the files' text; ProcFs reads them under an injectable root so tests use copied fixture files.
// A field the kernel does not provide is an empty optional, never a made-up 0.
#include <cstdint>
#include <filesystem>
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
};

// /proc/PID/io. Missing when the kernel lacks task I/O accounting or the file is unreadable.
struct ProcIo {
  std::optional<uint64_t> rchar, wchar, syscr, syscw, read_bytes, write_bytes;
};

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

double clock_ticks_per_s() noexcept;
// CPUs this process may run on (sched_getaffinity), at least 1.
int affinity_cpus() noexcept;

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

// Reads a small file whole; empty when it cannot be opened or read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

}  // namespace mmprof::procfs
