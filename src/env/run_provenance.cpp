#include "env/run_provenance.hpp"

#include <algorithm>
#include <string>

#include "util/version.hpp"

namespace mmprof::env {

bool affects_loader(std::string_view name) noexcept {
  static constexpr std::string_view kExact[] = {"OMP_NUM_THREADS",      "OMP_PROC_BIND",
                                                "OMP_PLACES",           "MKL_NUM_THREADS",
                                                "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING",
                                                "CUDA_DEVICE_ORDER",    "LD_PRELOAD",
                                                "LD_LIBRARY_PATH",      "TMPDIR",
                                                "XDG_CACHE_HOME",       "RANK",
                                                "WORLD_SIZE",           "LOCAL_RANK",
                                                "LOCAL_WORLD_SIZE",     "MASTER_ADDR",
                                                "MASTER_PORT",          "NCCL_DEBUG",
                                                "TORCH_HOME",           "GOMP_CPU_AFFINITY",
                                                "KMP_AFFINITY",         "TCMALLOC_RELEASE_RATE",
                                                "JEMALLOC_CONF",        "MALLOC_CONF"};
  static constexpr std::string_view kPrefixes[] = {
      "MALLOC_", "PYTORCH_", "MMPROF_", "OPENBLAS_", "MKL_", "OMP_", "GLIBC_TUNABLES"};
  if (std::find(std::begin(kExact), std::end(kExact), name) != std::end(kExact)) return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return name.substr(0, p.size()) == p; });
}

nlohmann::json loader_environment(char** envp) {
  nlohmann::json out = nlohmann::json::object();  // nlohmann's object is a sorted map
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || !affects_loader(entry.substr(0, eq))) continue;
    out[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return out;
}

nlohmann::json mmprof_build() {
  return {{"version", version()}, {"commit", git_commit()}, {"dirty", git_dirty()}};
}

}  // namespace mmprof::env
