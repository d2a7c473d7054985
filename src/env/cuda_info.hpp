#pragma once
// The GPUs the runtime sees (gpu/cuda_info.hpp), each with its PCIe link and NUMA node from
// sysfs.
#include <nlohmann/json.hpp>

#include "probe/host_files.hpp"

namespace mmprof::env {

// One entry per visible GPU: name, memory, compute capability, PCI address, PCIe link (sysfs
// current/max speed and width) and NUMA node (sysfs numa_node; -1 there means none: null).
// Sets `unavailable_reason` and returns [] when no GPU is usable.
nlohmann::json gpu_list(const procfs::HostFiles& host, std::string& unavailable_reason);

// The PCIe part of a GPU entry from sysfs, for a PCI address like "0000:17:00.0" (pure but for
// `host`; tested with fixture files).
nlohmann::json pci_link(const procfs::HostFiles& host, const std::string& pci_address);

}  // namespace mmprof::env
