#include "env/proc_parse.hpp"

#include <charconv>
#include <set>
#include <sstream>

namespace mmprof::env {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
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

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <class T>
std::optional<T> to_number(std::string_view s) {
  T v{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
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
    } else if (key == "model name" && info.model.empty()) {
      info.model = value;
    } else if ((key == "Hardware" || key == "Processor") && info.model.empty()) {
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

std::optional<uint64_t> parse_meminfo_kb(std::string_view text, std::string_view key) {
  std::optional<uint64_t> result;
  for_each_line(text, [&](std::string_view line) {
    const auto colon = line.find(':');
    if (result || colon == std::string_view::npos || trim(line.substr(0, colon)) != key) return;
    const auto fields = split_ws(trim(line.substr(colon + 1)));
    if (!fields.empty()) result = to_number<uint64_t>(fields[0]);
  });
  return result;
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

}  // namespace mmprof::env
