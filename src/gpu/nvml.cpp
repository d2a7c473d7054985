#include "gpu/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>

#include "gpu/dl_symbol.hpp"
#include "mmprof/error.hpp"

namespace mmprof::gpu {

std::vector<std::string> nvml_candidates(const char* env_value) {
  if (env_value != nullptr && *env_value != '\0') return {env_value};
  return {"libnvidia-ml.so.1", "libnvidia-ml.so"};
}

namespace {

// NVML's types as nvml.h declares them (the ABI every driver since R450 keeps).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct nvmlGpuInstanceProfileInfo_t {
  unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
      decoderCount, encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
};
// NVML_GPU_INSTANCE_PROFILE_7_SLICE: the whole GPU of a MIG-capable part.
constexpr unsigned kWholeGpuProfile = 4;

struct NvmlTable {
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*nvml_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  // Optional: older drivers lack some of them; their figures are then absent.
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*decoder)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*jpeg)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*profile)(nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_t*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  std::string path;
  std::string error;  // why none loaded
};

NvmlTable load_nvml_table(const char* env_value) {
  NvmlTable t;
  std::string errors;
  for (const std::string& file : nvml_candidates(env_value)) {
    // Never dlclose()d: NVML stays initialised for the life of the process.
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", dlerror());
      continue;
    }
    t.path = file;
    if (!(dl_bind(lib, "nvmlInit_v2", t.init) && dl_bind(lib, "nvmlErrorString", t.error_string) &&
          dl_bind(lib, "nvmlSystemGetDriverVersion", t.driver_version) &&
          dl_bind(lib, "nvmlSystemGetNVMLVersion", t.nvml_version) &&
          dl_bind(lib, "nvmlDeviceGetCount_v2", t.count) &&
          dl_bind(lib, "nvmlDeviceGetHandleByIndex_v2", t.handle) &&
          dl_bind(lib, "nvmlDeviceGetName", t.name) &&
          dl_bind(lib, "nvmlDeviceGetMemoryInfo", t.memory))) {
      t.init = nullptr;
      t.error = fmt::format("{} lacks a required NVML entry point", file);
      return t;
    }
    dl_bind(lib, "nvmlDeviceGetUtilizationRates", t.utilization);
    dl_bind(lib, "nvmlDeviceGetDecoderUtilization", t.decoder);
    dl_bind(lib, "nvmlDeviceGetJpgUtilization", t.jpeg);
    dl_bind(lib, "nvmlDeviceGetGpuInstanceProfileInfo", t.profile);
    dl_bind(lib, "nvmlDeviceGetComputeRunningProcesses_v3", t.processes);
    return t;
  }
  t.error = errors;
  return t;
}

// The table of the library MMPROF_NVML_LIB names (or the driver's), loaded and nvmlInit_v2()'d
// once per process and library; `error` says why not. The caller holds the mutex.
const NvmlTable& nvml_table() {
  static std::map<std::string, NvmlTable> loaded;
  const char* env = std::getenv(kNvmlLibEnv);
  const std::string key = env == nullptr ? "" : env;
  auto it = loaded.find(key);
  if (it != loaded.end()) return it->second;
  NvmlTable t = load_nvml_table(env);
  if (t.init != nullptr) {
    const nvmlReturn_t rc = t.init();
    if (rc != kSuccess) {
      t.error = fmt::format("nvmlInit_v2 failed: {}", t.error_string(rc));
      t.init = nullptr;
    }
  }
  return loaded.emplace(key, std::move(t)).first->second;
}

std::optional<unsigned> util(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*, unsigned*),
                             nvmlDevice_t d) {
  unsigned pct = 0, period_us = 0;
  if (fn == nullptr || fn(d, &pct, &period_us) != kSuccess) return std::nullopt;
  return pct;
}

std::optional<uint64_t> own_memory(const NvmlTable& t, nvmlDevice_t d) {
  if (t.processes == nullptr) return std::nullopt;
  std::array<nvmlProcessInfo_t, 64> procs{};
  unsigned n = procs.size();
  if (t.processes(d, &n, procs.data()) != kSuccess) return std::nullopt;
  const auto self = static_cast<unsigned>(getpid());
  for (unsigned i = 0; i < n && i < procs.size(); ++i)
    if (procs[i].pid == self) return procs[i].usedGpuMemory;
  return std::nullopt;
}

NvmlGpu read_gpu(const NvmlTable& t, unsigned index) {
  nvmlDevice_t d = nullptr;
  if (const nvmlReturn_t rc = t.handle(index, &d); rc != kSuccess) {
    throw UnavailableError(
        fmt::format("NVML is unavailable: GPU {}: {}", index, t.error_string(rc)));
  }
  NvmlGpu g;
  g.index = index;
  std::array<char, 96> name{};
  if (t.name(d, name.data(), name.size()) == kSuccess) g.name = name.data();
  nvmlMemory_t mem{};
  if (t.memory(d, &mem) == kSuccess) {
    g.memory_total_bytes = mem.total;
    g.memory_used_bytes = mem.used;
  }
  nvmlUtilization_t u{};
  if (t.utilization != nullptr && t.utilization(d, &u) == kSuccess) {
    g.sm_util_pct = u.gpu;
    g.memory_bw_util_pct = u.memory;
  }
  g.decoder_util_pct = util(t.decoder, d);
  g.jpeg_util_pct = util(t.jpeg, d);
  nvmlGpuInstanceProfileInfo_t profile{};
  if (t.profile != nullptr && t.profile(d, kWholeGpuProfile, &profile) == kSuccess) {
    g.nvdec_engines = profile.decoderCount;
    g.nvjpg_engines = profile.jpegCount;
  }
  g.process_memory_bytes = own_memory(t, d);
  return g;
}

}  // namespace

nlohmann::json to_json(const NvmlGpu& g) {
  const auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  const auto mib = [](const std::optional<uint64_t>& v) {
    return v ? nlohmann::json(*v >> 20) : nlohmann::json();
  };
  return {{"index", g.index},
          {"name", g.name},
          {"memory_total_mib", g.memory_total_bytes >> 20},
          {"memory_used_mib", g.memory_used_bytes >> 20},
          {"sm_util_pct", optional(g.sm_util_pct)},
          {"memory_bw_util_pct", optional(g.memory_bw_util_pct)},
          {"decoder_util_pct", optional(g.decoder_util_pct)},
          {"jpeg_util_pct", optional(g.jpeg_util_pct)},
          {"nvdec_engines", optional(g.nvdec_engines)},
          {"nvjpg_engines", optional(g.nvjpg_engines)},
          {"process_memory_mib", mib(g.process_memory_bytes)}};
}

NvmlSnapshot nvml_snapshot() {
  static std::mutex mutex;  // NVML is thread-safe; the table of loaded libraries is not
  const std::lock_guard lock(mutex);
  const NvmlTable& t = nvml_table();
  if (t.init == nullptr) throw UnavailableError("NVML is unavailable: " + t.error);
  NvmlSnapshot s;
  s.library = t.path;
  std::array<char, 96> text{};
  if (t.driver_version(text.data(), text.size()) == kSuccess) s.driver_version = text.data();
  text.fill('\0');
  if (t.nvml_version(text.data(), text.size()) == kSuccess) s.nvml_version = text.data();
  unsigned n = 0;
  if (const nvmlReturn_t rc = t.count(&n); rc != kSuccess) {
    throw UnavailableError(
        fmt::format("NVML is unavailable: nvmlDeviceGetCount_v2 failed: {}", t.error_string(rc)));
  }
  if (n == 0) throw UnavailableError("NVML is unavailable: it sees no GPU");
  for (unsigned i = 0; i < n; ++i)
    s.gpus.push_back(read_gpu(t, i));
  return s;
}

}  // namespace mmprof::gpu
