#pragma once
// NVIDIA's management library (NVML), loaded with dlopen: the driver version, and per GPU its
// name, memory, SM and memory-bandwidth utilisation, the decode (NVDEC) and JPEG (NVJPG) engines'
// utilisation and counts, and the GPU memory this process holds. No NVML header is needed: the
// handful of entry points are declared here as the driver exports them. Tests load a fake
// library with fabricated values through MMPROF_NVML_LIB.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mmprof::gpu {

inline constexpr const char* kNvmlLibEnv = "MMPROF_NVML_LIB";

// The libraries to try, in order: MMPROF_NVML_LIB when set (and only it), else the driver's.
std::vector<std::string> nvml_candidates(const char* env_value);

struct NvmlGpu {
  unsigned index = 0;
  std::string name;
  uint64_t memory_total_bytes = 0, memory_used_bytes = 0;
  // Percent of the last sample period (NVML's own; the period is per counter).
  std::optional<unsigned> sm_util_pct, memory_bw_util_pct;
  std::optional<unsigned> decoder_util_pct, jpeg_util_pct;
  // Engines of the whole GPU, from NVML's full-GPU instance profile (MIG-capable GPUs only).
  std::optional<unsigned> nvdec_engines, nvjpg_engines;
  // GPU memory of this process's context on the GPU, when NVML lists it.
  std::optional<uint64_t> process_memory_bytes;
};

struct NvmlSnapshot {
  std::string library;  // the file dlopen loaded
  std::string driver_version, nvml_version;
  std::vector<NvmlGpu> gpus;
};

// One GPU's figures as JSON (index, name, memory_*_mib, *_util_pct, nvdec/nvjpg_engines,
// process_memory_mib), null where NVML gave none: the inventory's and a run's words for them.
nlohmann::json to_json(const NvmlGpu& gpu);

// Loads NVML once, initialises it and reads every GPU now. Throws UnavailableError("NVML is
// unavailable: <reason>") without the library, a driver or a GPU.
NvmlSnapshot nvml_snapshot();

}  // namespace mmprof::gpu
