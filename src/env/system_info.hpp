#pragma once
// The "software" and "hardware" blocks of the inventory.
#include <nlohmann/json.hpp>

#include "probe/host_files.hpp"

namespace mmprof::env {

// compiler, libc, kernel (uname), distribution (/etc/os-release), ffmpeg, libjpeg_turbo,
// libarchive, cuda, cupti, libtorch, hwloc.
nlohmann::json software_info(const procfs::HostFiles& host);

// cpu (model from /proc/cpuinfo; sockets, cores, threads, NUMA nodes and caches from hwloc),
// memory (MemTotal), gpus (+ gpu_unavailable_reason).
nlohmann::json hardware_info(const procfs::HostFiles& host);

// The procfs-only part of hardware_info (pure but for `host`; fixture-tested): cpu model and
// logical CPUs from cpuinfo, RAM from meminfo.
nlohmann::json procfs_hardware(const procfs::HostFiles& host);

// The distribution from /etc/os-release (PRETTY_NAME, else NAME VERSION), null when absent.
nlohmann::json distribution(const procfs::HostFiles& host);

}  // namespace mmprof::env
