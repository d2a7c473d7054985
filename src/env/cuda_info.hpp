#pragma once
// CUDA runtime/driver and CUPTI versions, and the GPUs the runtime sees. The only file of the
// env layer that calls CUDA; compiles without it and says why each figure is null.
#include <nlohmann/json.hpp>

#include "probe/host_files.hpp"

namespace mmprof::env {

// {"runtime", "driver", "compiled_with", ...} with a "*_reason" beside each null.
nlohmann::json cuda_versions();
// {"api_version", "source"} from cupti_version.h at build time, or null + reason.
nlohmann::json cupti_version();

// One entry per visible GPU: name, memory, compute capability, PCI address, PCIe link (sysfs
// current/max speed and width) and NUMA node (sysfs numa_node; -1 there means none: null).
// Sets `unavailable_reason` and returns [] when no GPU is usable.
nlohmann::json gpu_list(const procfs::HostFiles& host, std::string& unavailable_reason);

// The PCIe part of a GPU entry from sysfs, for a PCI address like "0000:17:00.0" (pure but for
// `host`; tested with fixture files).
nlohmann::json pci_link(const procfs::HostFiles& host, const std::string& pci_address);

}  // namespace mmprof::env
