#pragma once
// Pure parsers for the text files of procfs and /etc the inventory reads. Each takes the file's
// content and tolerates missing fields (kernels and architectures differ): absent means nullopt
// or empty, never a guess.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::env {

// /proc/cpuinfo: the model name (x86 "model name", ARM "Hardware"/"Processor"/"CPU part"), the
// logical CPU count and the distinct "physical id"s (sockets; 0 when the kernel omits them).
struct CpuInfo {
  std::string model;
  int logical_cpus = 0;
  int sockets = 0;
  std::string flags_note;  // "avx2 avx512f ..." subset relevant to decode speed, when listed
};
CpuInfo parse_cpuinfo(std::string_view text);

// A "Key:   123 kB" field of /proc/meminfo, in kB.
std::optional<uint64_t> parse_meminfo_kb(std::string_view text, std::string_view key);

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

}  // namespace mmprof::env
