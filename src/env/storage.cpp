#include "env/storage.hpp"

#include <fmt/format.h>

#include "probe/proc_parse.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

// The whole disk of a block device: itself, or for a partition the /sys/block/<disk> that holds
// a <disk>/<partition> directory (sysfs nests partitions under their disk).
std::string disk_of(const procfs::HostFiles& host, const std::string& dev, bool partition) {
  if (!partition) return dev;
  for (const auto& disk : host.list("/sys/block")) {
    if (host.exists(std::string("/sys/block/").append(disk).append("/").append(dev))) return disk;
  }
  return "";
}

void add_block_device(const procfs::HostFiles& host, const procfs::MountEntry& m, json& out) {
  if (m.major == 0) {
    // Major 0 is the kernel's anonymous device range: tmpfs, overlay, NFS, FUSE, btrfs subvolumes.
    out["device_reason"] = fmt::format("{} is not backed by one block device (device {}:{})",
                                       m.fs_type, m.major, m.minor);
    return;
  }
  const auto uevent = host.read(fmt::format("/sys/dev/block/{}:{}/uevent", m.major, m.minor));
  const auto kv = procfs::parse_key_values(uevent.value_or(""));
  const auto name = kv.find("DEVNAME");
  if (name == kv.end()) {
    out["device_reason"] = fmt::format("no sysfs entry for block device {}:{}", m.major, m.minor);
    return;
  }
  const auto type = kv.find("DEVTYPE");
  const bool partition = type != kv.end() && type->second == "partition";
  const std::string disk = disk_of(host, name->second, partition);
  out["block_device"] = name->second;
  out["partition"] = partition;
  if (disk.empty()) {
    out["device_reason"] = "partition " + name->second + " has no parent disk in /sys/block";
    return;
  }
  out["disk"] = disk;
  const auto rot = host.read_line("/sys/block/" + disk + "/queue/rotational");
  out["rotational"] = rot && !rot->empty() ? json(*rot == "1") : json();
  const auto model = host.read_line("/sys/block/" + disk + "/device/model");
  out["model"] = model && !model->empty() ? json(*model) : json();
  if (!model || model->empty()) out["model_reason"] = "no /sys/block/" + disk + "/device/model";
}

}  // namespace

json storage_info(const procfs::HostFiles& host, const std::string& path) {
  json out = {{"path", path},         {"mount_point", nullptr},  {"fs_type", nullptr},
              {"source", nullptr},    {"block_device", nullptr}, {"disk", nullptr},
              {"partition", nullptr}, {"rotational", nullptr},   {"model", nullptr}};
  const auto text = host.read("/proc/self/mountinfo");
  if (!text) {
    out["device_reason"] = "/proc/self/mountinfo is not readable";
    return out;
  }
  const auto mounts = procfs::parse_mountinfo(*text);
  const procfs::MountEntry* m = procfs::find_mount(mounts, path);
  if (m == nullptr) {
    out["device_reason"] = "no mount holds " + path;
    return out;
  }
  out["mount_point"] = m->mount_point;
  out["fs_type"] = m->fs_type;
  out["source"] = m->source;
  add_block_device(host, *m, out);
  return out;
}

}  // namespace mmprof::env
