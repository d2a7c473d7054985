#include "probe/proc_parse.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>
#include <set>

namespace mmprof::procfs {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// The whole of `s` (blanks around it ignored) as a number; empty otherwise.
template <class T>
std::optional<T> to_number(std::string_view s) {
  s = trim(s);
  T v{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Calls f(line) for each line of text.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Calls f(key, value) for each "Key: value [unit]" line, value without its unit.
template <typename F>
void for_each_key_line(std::string_view text, F&& f) {
  for_each_line(text, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view value = trim(line.substr(colon + 1));
    const size_t space = value.find(' ');
    if (space != std::string_view::npos) value = value.substr(0, space);
    f(trim(line.substr(0, colon)), value);
  });
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  const auto blank = [&](size_t k) { return line[k] == ' ' || line[k] == '\t' || line[k] == '\n'; };
  while (i < line.size()) {
    while (i < line.size() && blank(i))
      ++i;
    const size_t start = i;
    while (i < line.size() && !blank(i))
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo (octal).
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && oct.find_first_not_of("01234567") == std::string_view::npos) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool is_under(std::string_view mount_point, std::string_view path) {
  if (mount_point == "/") return true;
  if (path.substr(0, mount_point.size()) != mount_point) return false;
  return path.size() == mount_point.size() || path[mount_point.size()] == '/';
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
  const auto rest = split_ws(text.substr(close + 1));
  if (rest.size() < 20) return std::nullopt;
  const auto field = [&](size_t n) { return to_number<uint64_t>(rest[n - 3]); };
  st.state = rest[0].empty() ? '?' : rest[0][0];
  const auto ppid = to_number<int>(rest[4 - 3]);
  const auto minflt = field(10), majflt = field(12), utime = field(14), stime = field(15),
             threads = field(20), start = field(22);
  if (!ppid || !minflt || !majflt || !utime || !stime || !threads || !start) return std::nullopt;
  st.ppid = *ppid;
  st.minflt = *minflt;
  st.majflt = *majflt;
  st.utime_ticks = *utime;
  st.stime_ticks = *stime;
  st.starttime_ticks = *start;
  st.num_threads = static_cast<int>(*threads);
  return st;
}

CpuTimes& CpuTimes::operator+=(const CpuTimes& o) {
  user += o.user;
  nice += o.nice;
  system += o.system;
  idle += o.idle;
  iowait += o.iowait;
  irq += o.irq;
  softirq += o.softirq;
  steal += o.steal;
  fields = fields == 0 ? o.fields : std::min(fields, o.fields);
  return *this;
}

SchedStat& SchedStat::operator+=(const SchedStat& o) {
  run_ns += o.run_ns;
  wait_ns += o.wait_ns;
  timeslices += o.timeslices;
  return *this;
}

std::map<int, CpuTimes> parse_cpu_times(std::string_view text) {
  std::map<int, CpuTimes> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    const auto f = split_ws(line);
    const std::string_view name = f[0].substr(3);
    const auto cpu = name.empty() ? std::optional<int>(-1) : to_number<int>(name);
    if (!cpu || *cpu < -1 || f.size() < 5) return;
    uint64_t CpuTimes::*const order[] = {&CpuTimes::user,    &CpuTimes::nice,   &CpuTimes::system,
                                         &CpuTimes::idle,    &CpuTimes::iowait, &CpuTimes::irq,
                                         &CpuTimes::softirq, &CpuTimes::steal};
    CpuTimes t;
    for (size_t i = 0; i < std::size(order) && i + 1 < f.size(); ++i) {
      const auto v = to_number<uint64_t>(f[i + 1]);
      if (!v) return;  // not a CPU line after all
      t.*order[i] = *v;
      t.fields = static_cast<int>(i) + 1;
    }
    out[*cpu] = t;
  });
  return out;
}

std::optional<SchedStat> parse_schedstat(std::string_view text) {
  const auto f = split_ws(trim(text));
  if (f.size() != 3) return std::nullopt;
  const auto run = to_number<uint64_t>(f[0]), wait = to_number<uint64_t>(f[1]),
             slices = to_number<uint64_t>(f[2]);
  if (!run || !wait || !slices) return std::nullopt;
  return SchedStat{*run, *wait, *slices};
}

std::optional<Pressure> parse_pressure(std::string_view text) {
  // "some avg10=0.00 avg60=0.00 avg300=0.00 total=0"
  Pressure p;
  bool any = false;
  for_each_line(text, [&](std::string_view line) {
    const auto f = split_ws(line);
    if (f.empty() || (f[0] != "some" && f[0] != "full")) return;
    const bool some = f[0] == "some";
    for (size_t i = 1; i < f.size(); ++i) {
      const auto eq = f[i].find('=');
      if (eq == std::string_view::npos) continue;
      const auto key = f[i].substr(0, eq), value = f[i].substr(eq + 1);
      if (key == "avg10") {
        (some ? p.some_avg10_pct : p.full_avg10_pct) = to_number<double>(value);
      } else if (key == "total") {
        (some ? p.some_total_us : p.full_total_us) = to_number<uint64_t>(value);
      }
    }
    any = true;
  });
  if (!any) return std::nullopt;
  return p;
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
  const auto parts = split_ws(trim(text));
  if (parts.size() != 2 || parts[0] == "max") return std::nullopt;
  const auto quota = to_number<int64_t>(parts[0]);
  const auto period = to_number<int64_t>(parts[1]);
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
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

std::optional<int64_t> parse_single_int(std::string_view text) {
  return to_number<int64_t>(text);
}

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  std::set<std::string> sockets;
  std::string arm_part;
  for_each_line(text, [&](std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto key = trim(line.substr(0, colon));
    const auto value = trim(line.substr(colon + 1));
    if (key == "processor") {
      info.logical_cpus++;
    } else if ((key == "model name" || key == "Hardware" || key == "Processor") &&
               info.model.empty()) {
      info.model = value;
    } else if (key == "CPU part" && arm_part.empty()) {
      arm_part = value;
    } else if (key == "physical id") {
      sockets.insert(std::string(value));
    } else if (key == "flags" && info.flags_note.empty()) {
      std::string note;
      for (const auto flag : split_ws(value)) {
        for (const char* wanted : {"sse4_2", "avx", "avx2", "avx512f", "avx512bw", "avx512_vnni",
                                   "amx_tile", "amx_bf16"}) {
          if (flag == wanted) {
            if (!note.empty()) note.push_back(' ');
            note.append(flag);
          }
        }
      }
      info.flags_note = note;
    }
  });
  if (info.model.empty() && !arm_part.empty()) info.model = "ARM CPU part " + arm_part;
  info.sockets = static_cast<int>(sockets.size());
  return info;
}

std::map<std::string, std::string> parse_os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    const auto eq = line.find('=');
    if (line.empty() || line.front() == '#' || eq == std::string_view::npos) return;
    auto value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    out[std::string(trim(line.substr(0, eq)))] = std::string(value);
  });
  return out;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
  std::vector<MountEntry> mounts;
  for_each_line(text, [&](std::string_view line) {
    const auto f = split_ws(line);
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-")
      ++dash;
    if (dash + 1 >= f.size()) return;  // no "-" separator or no type: not a mount line
    MountEntry m;
    const auto colon = f[2].find(':');
    if (colon != std::string_view::npos) {
      m.major = to_number<int>(f[2].substr(0, colon)).value_or(0);
      m.minor = to_number<int>(f[2].substr(colon + 1)).value_or(0);
    }
    m.root = unescape_octal(f[3]);
    m.mount_point = unescape_octal(f[4]);
    m.fs_type = std::string(f[dash + 1]);
    if (dash + 2 < f.size()) m.source = unescape_octal(f[dash + 2]);
    mounts.push_back(std::move(m));
  });
  return mounts;
}

const MountEntry* find_mount(const std::vector<MountEntry>& mounts, std::string_view path) {
  const MountEntry* best = nullptr;
  for (const auto& m : mounts) {
    if (!is_under(m.mount_point, path)) continue;
    if (best == nullptr || m.mount_point.size() >= best->mount_point.size()) best = &m;
  }
  return best;
}

std::map<std::string, NetCounters> parse_net_dev(std::string_view text) {
  // Two header lines, then "  eth0: rx_bytes rx_packets errs drop fifo frame compressed
  // multicast tx_bytes tx_packets ...".
  std::map<std::string, NetCounters> out;
  for_each_line(text, [&](std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto name = trim(line.substr(0, colon));
    const auto f = split_ws(line.substr(colon + 1));
    if (name.empty() || f.size() < 10) return;
    NetCounters c;
    c.rx_bytes = to_number<uint64_t>(f[0]).value_or(0);
    c.rx_packets = to_number<uint64_t>(f[1]).value_or(0);
    c.tx_bytes = to_number<uint64_t>(f[8]).value_or(0);
    c.tx_packets = to_number<uint64_t>(f[9]).value_or(0);
    out[std::string(name)] = c;
  });
  return out;
}

std::map<std::string, std::string> parse_key_values(std::string_view text) {
  std::map<std::string, std::string> out;
  for_each_line(text, [&](std::string_view line) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return;
    out[std::string(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 1)));
  });
  return out;
}

}  // namespace mmprof::procfs
