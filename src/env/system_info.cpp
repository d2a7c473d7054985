#include "env/system_info.hpp"

#include <sys/utsname.h>

#include "data/tar_index.hpp"
#include "decode/library_versions.hpp"
#include "env/cuda_info.hpp"
#include "env/gpu_decode_info.hpp"
#include "env/hwloc_topology.hpp"
#include "env/library_versions.hpp"
#include "gpu/cuda_info.hpp"
#include "probe/proc_parse.hpp"

namespace mmprof::env {

using nlohmann::json;

json distribution(const procfs::HostFiles& host) {
  auto text = host.read("/etc/os-release");
  if (!text) text = host.read("/usr/lib/os-release");  // os-release(5)'s fallback location
  if (!text) return nullptr;
  const auto kv = procfs::parse_os_release(*text);
  if (const auto it = kv.find("PRETTY_NAME"); it != kv.end()) return it->second;
  const auto name = kv.find("NAME");
  if (name == kv.end()) return nullptr;
  const auto ver = kv.find("VERSION");
  std::string out = name->second;
  if (ver != kv.end()) out.append(" ").append(ver->second);
  return out;
}

json software_info(const procfs::HostFiles& host) {
  utsname u{};
  json kernel;
  if (uname(&u) == 0) {
    kernel = {{"release", u.release}, {"version", u.version}, {"machine", u.machine}};
  }
  std::string topo_error;
  const auto topo = read_topology(topo_error);
  return {{"compiler", compiler_version()},
          {"libc", libc_version()},
          {"kernel", kernel},
          {"distribution", distribution(host)},
          {"ffmpeg", decode::ffmpeg_version()},
          {"libjpeg_turbo", decode::libjpeg_turbo_version()},
          {"libarchive", libarchive_version()},
          {"cuda", gpu::cuda_versions()},
          {"cupti", gpu::cupti_version()},
          {"gpu_decode", gpu_decode_info()},
          {"libtorch", libtorch_version()},
          {"hwloc", topo ? json(topo->hwloc_version) : json()}};
}

json procfs_hardware(const procfs::HostFiles& host) {
  json cpu = json::object();
  if (const auto text = host.read("/proc/cpuinfo")) {
    const procfs::CpuInfo info = procfs::parse_cpuinfo(*text);
    cpu["model"] = info.model.empty() ? json() : json(info.model);
    cpu["logical_cpus"] = info.logical_cpus;
    cpu["simd"] = info.flags_note.empty() ? json() : json(info.flags_note);
  } else {
    cpu = {{"model", nullptr}, {"logical_cpus", nullptr}, {"simd", nullptr}};
  }
  json memory = {{"total_mib", nullptr}};
  if (const auto text = host.read("/proc/meminfo")) {
    if (const auto kb = procfs::parse_meminfo(*text).mem_total_kb) memory["total_mib"] = *kb / 1024;
  }
  return {{"cpu", cpu}, {"memory", memory}};
}

json hardware_info(const procfs::HostFiles& host) {
  json hw = procfs_hardware(host);
  json& cpu = hw["cpu"];
  std::string topo_error;
  if (const auto topo = read_topology(topo_error)) {
    cpu["sockets"] = topo->packages;
    cpu["cores"] = topo->cores;
    cpu["threads"] = topo->pus;
    json numa = json::array();
    for (const auto& n : topo->numa)
      numa.push_back({{"node", n.os_index}, {"memory_mib", n.memory_mib}, {"cpus", n.cpus}});
    json caches = json::array();
    for (const auto& c : topo->caches) {
      caches.push_back({{"level", c.name},
                        {"size_kb", c.size_kb},
                        {"count", c.count},
                        {"line_bytes", c.line_bytes}});
    }
    hw["numa_nodes"] = numa;
    hw["caches"] = caches;
    hw["topology_source"] = "hwloc " + topo->hwloc_version;
  } else {
    cpu["sockets"] = cpu["cores"] = cpu["threads"] = nullptr;
    hw["numa_nodes"] = hw["caches"] = nullptr;
    hw["topology_source"] = nullptr;
    hw["topology_reason"] = topo_error;
  }
  std::string gpu_reason;
  hw["gpus"] = gpu_list(host, gpu_reason);
  add_decode_engines(hw["gpus"], gpu_decode_info()["nvml"]);
  hw["gpu_unavailable_reason"] = gpu_reason.empty() ? json() : json(gpu_reason);
  return hw;
}

}  // namespace mmprof::env
