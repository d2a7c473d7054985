#include "env/cuda_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpu/cuda_info.hpp"
#include "gpu/cuda_runtime.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

json int_or_null(const std::optional<std::string>& s) {
  if (!s || s->empty()) return nullptr;
  try {
    const int v = std::stoi(*s);
    return v < 0 ? json() : json(v);  // sysfs numa_node -1 and speed -1 mean "unknown"
  } catch (const std::exception&) {
    return nullptr;
  }
}

json text_or_null(const std::optional<std::string>& s) {
  return s && !s->empty() ? json(*s) : json();
}

}  // namespace

json pci_link(const procfs::HostFiles& host, const std::string& pci_address) {
  std::string address = pci_address;
  std::transform(address.begin(), address.end(), address.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string dir = "/sys/bus/pci/devices/" + address;
  return {{"pci_address", address},
          {"link_speed", text_or_null(host.read_line(dir + "/current_link_speed"))},
          {"link_width", int_or_null(host.read_line(dir + "/current_link_width"))},
          {"max_link_speed", text_or_null(host.read_line(dir + "/max_link_speed"))},
          {"max_link_width", int_or_null(host.read_line(dir + "/max_link_width"))},
          {"numa_node", int_or_null(host.read_line(dir + "/numa_node"))}};
}

json gpu_list(const procfs::HostFiles& host, std::string& unavailable_reason) {
  json gpus = json::array();
  const auto& availability = gpu::gpu_availability();
  if (!availability.available) {
    unavailable_reason = availability.reason;
    return gpus;
  }
  for (const gpu::CudaDevice& d : gpu::cuda_devices()) {
    json g = {{"index", d.index},
              {"name", d.name},
              {"memory_mib", d.memory_mib},
              {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
              {"multiprocessors", d.multiprocessors}};
    g["pcie"] = pci_link(host, d.pci_address);
    g["numa_node"] = g["pcie"]["numa_node"];
    gpus.push_back(std::move(g));
  }
  return gpus;
}

}  // namespace mmprof::env
