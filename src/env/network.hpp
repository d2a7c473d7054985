#pragma once
// Network interfaces (sysfs) and the bytes they moved during a run (/proc/net/dev before and
// after): data read over NFS, an object store or a remote dataset shows up here, not as disk I/O.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "probe/host_files.hpp"
#include "probe/proc_parse.hpp"

namespace mmprof::env {

// [{"name", "operstate", "speed_mbps" (null when down or unreported: sysfs gives -1 or EINVAL),
//   "mtu"}] for each entry of /sys/class/net, sorted by name.
nlohmann::json network_interfaces(const procfs::HostFiles& host);

// A snapshot of /proc/net/dev with the monotonic time it was taken.
struct NetworkSnapshot {
  int64_t t_ns = 0;
  std::map<std::string, procfs::NetCounters> interfaces;
  bool valid = false;
};

// Reads /proc/net/dev now (the calling process's network namespace). Cheap: one small read.
NetworkSnapshot network_counters(const procfs::HostFiles& host = procfs::HostFiles());

// Bytes and packets moved between two snapshots, per interface and in total (loopback "lo"
// listed but left out of the totals: it is not the network). Pure. Counters that went backwards
// (an interface re-created) count as 0.
nlohmann::json network_delta(const NetworkSnapshot& before, const NetworkSnapshot& after);

}  // namespace mmprof::env
