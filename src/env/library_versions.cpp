#include "env/library_versions.hpp"

#include <gnu/libc-version.h>

#include <cstdlib>
#include <system_error>

#include "step/torch_plugin.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

}  // namespace

json compiler_version() {
#if defined(__clang__)
  return {
      {"name", "clang"}, {"version", __clang_version__}, {"source", "build: __clang_version__"}};
#elif defined(__GNUC__)
  return {{"name", "gcc"}, {"version", __VERSION__}, {"source", "build: __VERSION__"}};
#else
  return {{"name", nullptr}, {"version", nullptr}, {"reason", "unknown compiler"}};
#endif
}

json libc_version() {
  return {{"name", "glibc"},
          {"version", gnu_get_libc_version()},
          {"source", "runtime: gnu_get_libc_version()"}};
}

json libtorch_version() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  json searched = json::array();
  json found;
  for (const auto& path : torch_plugin_candidates(std::getenv(kTorchPluginEnv), exe.parent_path(),
                                                  torch_plugin_install_reldir(), nullptr)) {
    searched.push_back(path.string());
    if (found.is_null() && std::filesystem::exists(path, ec)) found = path.string();
  }
  json r = {{"plugin", found}, {"plugin_searched", searched}};
#ifdef MMPROF_TORCH_VERSION
  r["version"] = MMPROF_TORCH_VERSION;
  r["source"] = "build: CMake Torch_VERSION (libtorch itself is not loaded to ask)";
#else
  r["version"] = nullptr;
  r["reason"] = "mmprof was built without libtorch";
#endif
  return r;
}

}  // namespace mmprof::env
