#include "probe/procfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <map>

namespace mmprof::procfs {
namespace {

namespace fs = std::filesystem;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

template <typename T>
std::optional<T> to_number(std::string_view s) {
  s = trim(s);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || s.empty()) return std::nullopt;
  return v;
}

// Calls f(key, value) for each "Key: value [unit]" line, value without its unit.
template <typename F>
void for_each_key_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = trim(line.substr(colon + 1));
    const size_t space = value.find(' ');
    if (space != std::string_view::npos) value = value.substr(0, space);
    f(trim(line.substr(0, colon)), value);
  }
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n'))
      ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\n')
      ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_pid_name(const char* name) {
  if (*name == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
  }
  return true;
}

}  // namespace

std::optional<int64_t> Smaps::uss_kb() const {
  if (!private_clean_kb || !private_dirty_kb) return std::nullopt;
  return *private_clean_kb + *private_dirty_kb;
}

Smaps parse_smaps_rollup(std::string_view text) {
  Smaps s;
  const std::map<std::string_view, std::optional<int64_t> Smaps::*> fields = {
      {"Rss", &Smaps::rss_kb},
      {"Pss", &Smaps::pss_kb},
      {"Pss_Anon", &Smaps::pss_anon_kb},
      {"Pss_File", &Smaps::pss_file_kb},
      {"Pss_Shmem", &Smaps::pss_shmem_kb},
      {"Shared_Clean", &Smaps::shared_clean_kb},
      {"Shared_Dirty", &Smaps::shared_dirty_kb},
      {"Private_Clean", &Smaps::private_clean_kb},
      {"Private_Dirty", &Smaps::private_dirty_kb},
      {"Swap", &Smaps::swap_kb},
      {"SwapPss", &Smaps::swap_pss_kb}};
  for_each_key_line(text, [&](std::string_view key, std::string_view value) {
    const auto it = fields.find(key);
    if (it != fields.end()) s.*(it->second) = to_number<int64_t>(value);
  });
  return s;
}

std::optional<ProcStat> parse_stat(std::string_view text) {
  // "pid (comm) state ppid ..." where comm is the executable name, up to 15 bytes, which may
  // itself contain spaces, '(' and ')': proc(5) says to take the last ')'.
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat st;
  const auto pid = to_number<int>(text.substr(0, open));
  if (!pid) return std::nullopt;
  st.pid = *pid;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields from 3 (state) on; proc(5) numbers them from 1, so field n is rest[n - 3].
  const auto rest = split_spaces(text.substr(close + 1));
  if (rest.size() < 20) return std::nullopt;
  const auto field = [&](size_t n) { return to_number<uint64_t>(rest[n - 3]); };
  st.state = rest[0].empty() ? '?' : rest[0][0];
  const auto ppid = to_number<int>(rest[4 - 3]);
  const auto minflt = field(10), majflt = field(12), utime = field(14), stime = field(15),
             start = field(22);
  if (!ppid || !minflt || !majflt || !utime || !stime || !start) return std::nullopt;
  st.ppid = *ppid;
  st.minflt = *minflt;
  st.majflt = *majflt;
  st.utime_ticks = *utime;
  st.stime_ticks = *stime;
  st.starttime_ticks = *start;
  return st;
}

ProcIo parse_io(std::string_view text) {
  ProcIo io;
  const std::map<std::string_view, std::optional<uint64_t> ProcIo::*> fields = {
      {"rchar", &ProcIo::rchar},           {"wchar", &ProcIo::wchar},
      {"syscr", &ProcIo::syscr},           {"syscw", &ProcIo::syscw},
      {"read_bytes", &ProcIo::read_bytes}, {"write_bytes", &ProcIo::write_bytes}};
  for_each_key_line(text, [&](std::string_view key, std::string_view value) {
    const auto it = fields.find(key);
    if (it != fields.end()) io.*(it->second) = to_number<uint64_t>(value);
  });
  return io;
}

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m;
  const std::map<std::string_view, std::optional<int64_t> MemInfo::*> fields = {
      {"MemTotal", &MemInfo::mem_total_kb},
      {"MemAvailable", &MemInfo::mem_available_kb},
      {"Cached", &MemInfo::cached_kb},
      {"Shmem", &MemInfo::shmem_kb},
      {"HugePages_Total", &MemInfo::huge_pages_total},
      {"HugePages_Free", &MemInfo::huge_pages_free},
      {"Hugepagesize", &MemInfo::huge_page_kb}};
  for_each_key_line(text, [&](std::string_view key, std::string_view value) {
    const auto it = fields.find(key);
    if (it != fields.end()) m.*(it->second) = to_number<int64_t>(value);
  });
  return m;
}

std::optional<std::string> parse_cgroup_v2_path(std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.substr(0, 3) == "0::") return std::string(trim(line.substr(3)));
  }
  return std::nullopt;
}

std::optional<double> parse_cpu_max(std::string_view text) {
  const auto parts = split_spaces(trim(text));
  if (parts.size() != 2 || parts[0] == "max") return std::nullopt;
  const auto quota = to_number<int64_t>(parts[0]);
  const auto period = to_number<int64_t>(parts[1]);
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

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

std::optional<std::string> read_small_file(const fs::path& path) {
  // open/read rather than streams: this runs a few dozen times per sample, and procfs files
  // must be read in one go to be consistent.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
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

std::optional<int64_t> parse_statm_rss_kb(std::string_view text, int64_t page_kb) {
  // "size resident shared text lib data dt", in pages.
  const std::string line(text);
  long long size = 0, resident = 0;
  if (std::sscanf(line.c_str(), "%lld %lld", &size, &resident) != 2 || resident < 0) {
    return std::nullopt;
  }
  return resident * page_kb;
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
    return text ? to_number<int64_t>(*text) : std::nullopt;
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
