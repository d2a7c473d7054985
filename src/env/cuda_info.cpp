#include "env/cuda_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpu/cuda_runtime.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#if __has_include(<cupti_version.h>)
#include <cupti_version.h>
#endif
#endif

namespace mmprof::env {
namespace {

using nlohmann::json;

#ifdef MMPROF_HAVE_CUDA
std::string cuda_triplet(int v) {
  // CUDA encodes 13.0 as 13000 (1000*major + 10*minor).
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}
#endif

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

json cuda_versions() {
#ifdef MMPROF_HAVE_CUDA
  json r = {{"compiled_with", cuda_triplet(CUDART_VERSION)},
            {"source", "runtime: cudaRuntimeGetVersion(), cudaDriverGetVersion()"}};
  int v = 0;
  const cudaError_t rt = cudaRuntimeGetVersion(&v);
  r["runtime"] = rt == cudaSuccess ? json(cuda_triplet(v)) : json();
  if (rt != cudaSuccess) r["runtime_reason"] = cudaGetErrorString(rt);
  v = 0;
  const cudaError_t dr = cudaDriverGetVersion(&v);
  // Without a driver the call succeeds and reports 0.
  r["driver"] = dr == cudaSuccess && v > 0 ? json(cuda_triplet(v)) : json();
  if (dr != cudaSuccess) {
    r["driver_reason"] = fmt::format("cudaDriverGetVersion failed: {}", cudaGetErrorString(dr));
  } else if (v == 0) {
    r["driver_reason"] = "no CUDA driver is installed (cudaDriverGetVersion reports 0)";
  }
  return r;
#else
  const char* why = "mmprof was built without CUDA (MMPROF_WITH_CUDA=OFF or no toolkit found)";
  return {{"compiled_with", nullptr},
          {"runtime", nullptr},
          {"runtime_reason", why},
          {"driver", nullptr},
          {"driver_reason", why}};
#endif
}

json cupti_version() {
#if defined(MMPROF_HAVE_CUDA) && defined(CUPTI_API_VERSION)
  return {{"api_version", CUPTI_API_VERSION},
          {"source", "build: cupti_version.h CUPTI_API_VERSION"}};
#elif defined(MMPROF_HAVE_CUDA)
  return {{"api_version", nullptr}, {"reason", "cupti_version.h not found in the CUDA toolkit"}};
#else
  return {{"api_version", nullptr}, {"reason", "mmprof was built without CUDA"}};
#endif
}

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
#ifdef MMPROF_HAVE_CUDA
  for (int d = 0; d < availability.devices; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    json g = {{"index", d},
              {"name", p.name},
              {"memory_mib", p.totalGlobalMem >> 20},
              {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
              {"multiprocessors", p.multiProcessorCount}};
    g["pcie"] = pci_link(
        host, fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID));
    g["numa_node"] = g["pcie"]["numa_node"];
    gpus.push_back(std::move(g));
  }
#else
  (void)host;
#endif
  return gpus;
}

}  // namespace mmprof::env
