#include "external/hook_env.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "config/config_keys.hpp"
#include "gpu/cuda_runtime.hpp"
#include "mmprof/error.hpp"
#include "util/shipped_files.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

#ifndef MMPROF_HOOK_INSTALL_RELDIR
#define MMPROF_HOOK_INSTALL_RELDIR "../share/mmprof"
#endif
#ifndef MMPROF_HOOK_SOURCE_DIR
#define MMPROF_HOOK_SOURCE_DIR ""
#endif
#ifndef MMPROF_PLUGIN_INSTALL_RELDIR
#define MMPROF_PLUGIN_INSTALL_RELDIR "../lib/mmprof"
#endif
#ifndef MMPROF_INJECT_BUILD_PATH
#define MMPROF_INJECT_BUILD_PATH ""
#endif

// The keys a job's DataLoader takes, for messages: "num_workers, batch_size, ...".
std::string known_names() {
  std::string out;
  for (const auto key : config::dataloader_keys())
    out += (out.empty() ? "" : ", ") + std::string(key.substr(7));
  return out;
}

// Sections a user's job is observed with: the sampler's period and the trace's caps, and the
// step counts that --steps / --warmup-steps also set.
bool applies_to_a_job(const std::string& key) {
  return key.rfind("metrics.", 0) == 0 || key.rfind("trace.", 0) == 0 || key == "phases.steps" ||
         key == "phases.warmup_steps";
}

}  // namespace

std::optional<fs::path> hook_python_dir() {
  return find_shipped_file(std::getenv(kHookPythonEnv), "python", MMPROF_HOOK_INSTALL_RELDIR,
                           MMPROF_HOOK_SOURCE_DIR);
}

std::optional<fs::path> cupti_inject_library() {
  return find_shipped_file(std::getenv("MMPROF_CUPTI_INJECT"), "libmmprof_cupti_inject.so",
                           MMPROF_PLUGIN_INSTALL_RELDIR, MMPROF_INJECT_BUILD_PATH);
}

std::vector<std::pair<std::string, std::string>> job_environment(
    const HookSettings& hook, const std::optional<fs::path>& gpu_events,
    std::vector<std::string>& unavailable) {
  std::vector<std::pair<std::string, std::string>> env;
  if (const auto python = hook_python_dir()) {
    const char* existing = std::getenv("PYTHONPATH");
    std::string path = python->string();
    if (existing != nullptr && *existing != '\0') path += std::string(":") + existing;
    env.emplace_back("PYTHONPATH", path);
    env.emplace_back(kHookDirEnv, hook.dir.string());
    if (hook.max_batches) env.emplace_back(kHookMaxBatchesEnv, std::to_string(*hook.max_batches));
    if (hook.stop_file) env.emplace_back(kHookStopFileEnv, hook.stop_file->string());
    if (!hook.loader.empty()) env.emplace_back(kHookLoaderEnv, hook.loader);
    env.emplace_back(kHookDigestBatchesEnv, std::to_string(hook.digest_batches));
    if (!hook.overrides.is_null()) env.emplace_back(kHookOverridesEnv, hook.overrides.dump());
  } else {
    unavailable.push_back(
        fmt::format("hook: unavailable: its Python package (sitecustomize.py) was found neither "
                    "in ${} nor next to mmprof ({}/python) nor in the source tree",
                    kHookPythonEnv, MMPROF_HOOK_INSTALL_RELDIR));
  }
  if (gpu_events) {
    const auto& gpu = gpu::gpu_availability();
    const auto inject = cupti_inject_library();
    if (!gpu.available) {
      unavailable.push_back("gpu: unavailable: " + gpu.reason);
    } else if (!inject) {
      unavailable.push_back(
          "gpu: unavailable: libmmprof_cupti_inject.so was not built (no CUDA toolkit) or not "
          "found next to mmprof");
    } else {
      env.emplace_back("CUDA_INJECTION64_PATH", inject->string());
      env.emplace_back("MMPROF_GPU_EVENTS", gpu_events->string());
    }
  }
  return env;
}

json dataloader_overrides(const json& tree, const std::vector<std::string>& sets) {
  json out = json::object();
  for (const std::string& s : sets) {
    const std::string key = s.substr(0, s.find('='));
    if (applies_to_a_job(key)) continue;
    if (key.rfind("loader.", 0) != 0) {
      throw UsageError(fmt::format(
          "--set {}: a user's job does not read mmprof's configuration; for a job, --set takes "
          "loader.* (applied to its DataLoader: {}), metrics.*, trace.*, phases.steps and "
          "phases.warmup_steps",
          key, known_names()));
    }
    const std::string name = key.substr(7);
    const config::KeySpec* spec = config::find_key(key);
    if (spec == nullptr || spec->dataloader.empty()) {
      throw UsageError(fmt::format(
          "--set {}: a PyTorch DataLoader has no such argument (it is a setting of mmprof's own "
          "loader); a job's DataLoader takes loader.{{{}}}",
          key, known_names()));
    }
    const json& v = tree.at("loader").at(name);
    if (name == "pin_memory") {
      if (v == "auto") continue;  // auto forces nothing: the job's own choice stands
      out[std::string(spec->dataloader)] = v == "true";
    } else {
      out[std::string(spec->dataloader)] = v;
    }
  }
  return out.empty() ? json(nullptr) : out;
}

}  // namespace mmprof::external
