#pragma once
// Where the data lives: the mount that holds the data path, its filesystem and the block device
// under it (rotational or not, model), from /proc/self/mountinfo and sysfs.
#include <nlohmann/json.hpp>
#include <string>

#include "probe/host_files.hpp"

namespace mmprof::env {

// `path` must be absolute and canonical (symlinks resolved) as the caller sees it.
// {"path", "mount_point", "fs_type", "source", "block_device", "disk", "partition",
//  "rotational", "model", "device_reason" (why block fields are null)}.
nlohmann::json storage_info(const procfs::HostFiles& host, const std::string& path);

}  // namespace mmprof::env
