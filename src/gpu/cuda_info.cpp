#include "gpu/cuda_info.hpp"

#include <fmt/format.h>

#include "gpu/cuda_runtime.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#if __has_include(<cupti_version.h>)
#include <cupti_version.h>
#endif
#endif

namespace mmprof::gpu {
namespace {

using nlohmann::json;

#ifdef MMPROF_HAVE_CUDA
std::string cuda_triplet(int v) {
  // CUDA encodes 13.0 as 13000 (1000*major + 10*minor).
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}
#endif

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

std::vector<CudaDevice> cuda_devices() {
  std::vector<CudaDevice> out;
  const auto& availability = gpu_availability();
  if (!availability.available) return out;
#ifdef MMPROF_HAVE_CUDA
  for (int d = 0; d < availability.devices; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    out.push_back(
        {d, p.name, p.totalGlobalMem >> 20, p.major, p.minor, p.multiProcessorCount,
         fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID)});
  }
#endif
  return out;
}

}  // namespace mmprof::gpu
