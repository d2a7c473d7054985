#include "probe/procfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <map>

#include "probe/host_files.hpp"

namespace mmprof::procfs {
namespace {

namespace fs = std::filesystem;

bool is_pid_name(const char* name) {
  if (*name == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
  }
  return true;
}

}  // namespace

double clock_ticks_per_s() noexcept {
  static const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

int affinity_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::vector<int> affinity_cpu_ids() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return ids;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
  }
  return ids;
}

std::optional<ProcStat> ProcFs::stat(int pid) const {
  const auto text = read_small_file(roots_.proc / std::to_string(pid) / "stat");
  if (!text) return std::nullopt;
  return parse_stat(*text);
}

std::optional<Smaps> ProcFs::smaps(int pid) const {
  const auto text = read_small_file(roots_.proc / std::to_string(pid) / "smaps_rollup");
  if (!text || text->empty()) return std::nullopt;
  return parse_smaps_rollup(*text);
}

std::optional<int64_t> ProcFs::statm_rss_kb(int pid) const {
  const auto text = read_small_file(roots_.proc / std::to_string(pid) / "statm");
  if (!text || text->empty()) return std::nullopt;
  return parse_statm_rss_kb(*text, sysconf(_SC_PAGESIZE) / 1024);
}

std::optional<ProcIo> ProcFs::io(int pid) const {
  const auto text = read_small_file(roots_.proc / std::to_string(pid) / "io");
  if (!text || text->empty()) return std::nullopt;
  return parse_io(*text);
}

std::optional<SchedStat> ProcFs::schedstat(int pid, int threads) const {
  const fs::path dir = roots_.proc / std::to_string(pid);
  if (threads != 1) {
    // The threads' files, read one by one: a thread that ends meanwhile is left out.
    if (DIR* tasks = ::opendir((dir / "task").c_str())) {
      std::optional<SchedStat> sum;
      while (const dirent* e = ::readdir(tasks)) {
        if (!is_pid_name(e->d_name)) continue;
        const auto text = read_small_file(dir / "task" / e->d_name / "schedstat");
        const auto one = text ? parse_schedstat(*text) : std::nullopt;
        if (!one) continue;
        if (!sum) sum.emplace();
        *sum += *one;
      }
      ::closedir(tasks);
      if (sum) return sum;
    }
  }
  const auto text = read_small_file(dir / "schedstat");
  return text ? parse_schedstat(*text) : std::nullopt;
}

std::map<int, CpuTimes> ProcFs::cpu_times() const {
  const auto text = read_small_file(roots_.proc / "stat");
  return text ? parse_cpu_times(*text) : std::map<int, CpuTimes>{};
}

std::optional<Pressure> ProcFs::cpu_pressure() const {
  const auto text = read_small_file(roots_.proc / "pressure" / "cpu");
  return text ? parse_pressure(*text) : std::nullopt;
}

MemInfo ProcFs::meminfo() const {
  const auto text = read_small_file(roots_.proc / "meminfo");
  return text ? parse_meminfo(*text) : MemInfo{};
}

Cgroup ProcFs::cgroup() const {
  Cgroup cg;
  const auto text = read_small_file(roots_.proc / "self" / "cgroup");
  if (!text) return cg;
  const auto path = parse_cgroup_v2_path(*text);
  if (!path) return cg;
  // On a hybrid v1/v2 host the v2 hierarchy is mounted at <root>/unified.
  for (const fs::path& base : {roots_.cgroup, roots_.cgroup / "unified"}) {
    const fs::path dir = base / fs::path(*path).relative_path();
    std::error_code ec;
    if (fs::exists(dir / "cgroup.controllers", ec)) {
      cg.dir = dir;
      break;
    }
  }
  if (!cg.dir) return cg;
  if (const auto cpu = read_small_file(*cg.dir / "cpu.max"))
    cg.cpu_quota_cores = parse_cpu_max(*cpu);
  read_cgroup_memory(cg);
  return cg;
}

void ProcFs::read_cgroup_memory(Cgroup& cg) const {
  if (!cg.dir) return;
  const auto read_bytes = [&](const char* name) -> std::optional<int64_t> {
    const auto text = read_small_file(*cg.dir / name);
    return text ? parse_single_int(*text) : std::nullopt;
  };
  cg.memory_current_bytes = read_bytes("memory.current");
  cg.memory_peak_bytes = read_bytes("memory.peak");
}

FsUsage ProcFs::shm() const {
  FsUsage u;
  struct statvfs v {};
  if (::statvfs(roots_.shm.c_str(), &v) != 0 || v.f_blocks == 0) return u;
  u.total_bytes = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
  u.used_bytes = static_cast<uint64_t>(v.f_blocks - v.f_bfree) * v.f_frsize;
  return u;
}

std::vector<ProcStat> ProcFs::all_processes() const {
  std::vector<ProcStat> out;
  DIR* dir = ::opendir(roots_.proc.c_str());
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    if (!is_pid_name(e->d_name)) continue;
    const auto text = read_small_file(roots_.proc / e->d_name / "stat");
    if (!text) continue;  // exited since readdir
    if (auto st = parse_stat(*text)) out.push_back(std::move(*st));
  }
  ::closedir(dir);
  return out;
}

std::vector<const ProcStat*> descendants(const std::vector<ProcStat>& processes, int root) {
  std::multimap<int, const ProcStat*> by_parent;
  for (const auto& p : processes)
    by_parent.emplace(p.ppid, &p);
  std::vector<const ProcStat*> out;
  std::vector<int> todo = {root};
  while (!todo.empty() && out.size() < processes.size()) {
    const int parent = todo.back();
    todo.pop_back();
    const auto [lo, hi] = by_parent.equal_range(parent);
    for (auto it = lo; it != hi; ++it) {
      if (it->second->pid == root) continue;
      out.push_back(it->second);
      todo.push_back(it->second->pid);
    }
  }
  return out;
}

}  // namespace mmprof::procfs
