#pragma once
// What the CUDA runtime says of itself and of the GPUs it sees, for the manifest (no GPU needed
// for the versions). Compiles without CUDA and says why each figure is null.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmprof::gpu {

// {"runtime", "driver", "compiled_with", ...} with a "*_reason" beside each null.
nlohmann::json cuda_versions();
// {"api_version", "source"} from cupti_version.h at build time, or null + reason.
nlohmann::json cupti_version();

// A GPU as cudaGetDeviceProperties describes it.
struct CudaDevice {
  int index = 0;
  std::string name;
  uint64_t memory_mib = 0;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::string pci_address;  // "0000:17:00.0"
};
// Every GPU the runtime sees (empty without one, or without CUDA: gpu_availability() says why).
std::vector<CudaDevice> cuda_devices();

}  // namespace mmprof::gpu
