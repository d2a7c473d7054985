#pragma once
// What a user's job is started with so that mmprof can see inside it without a code change: the
// zero-code Python hook first on PYTHONPATH with its settings (docs/external-hook.md), and, when a
// GPU is usable, the CUPTI injection library (CUDA_INJECTION64_PATH). Also the translation of
// `--set loader.*` into the DataLoader arguments the hook applies.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmprof::external {

// Environment variable names of the hook's protocol.
inline constexpr const char* kHookDirEnv = "MMPROF_HOOK_DIR";
inline constexpr const char* kHookOverridesEnv = "MMPROF_HOOK_OVERRIDES";
inline constexpr const char* kHookMaxBatchesEnv = "MMPROF_HOOK_MAX_BATCHES";
inline constexpr const char* kHookStopFileEnv = "MMPROF_HOOK_STOP_FILE";
inline constexpr const char* kHookLoaderEnv = "MMPROF_HOOK_LOADER";
inline constexpr const char* kHookDigestBatchesEnv = "MMPROF_HOOK_DIGEST_BATCHES";
// How many batches of each loader the hook digests at most (the content check of `ab`).
inline constexpr int64_t kDigestBatches = 8;
// Where the hook's Python package is, when it is not where mmprof looks (an override).
inline constexpr const char* kHookPythonEnv = "MMPROF_HOOK_PYTHONPATH";

struct HookSettings {
  std::filesystem::path dir;  // the per-process record files go here
  std::optional<int64_t> max_batches;
  std::optional<std::filesystem::path> stop_file;
  std::string loader;  // which loader to follow ("" = the one that gets there first)
  // The first batches of each loader whose content the hook digests: no more than the warm-up
  // holds, so that no measured step carries a digest's cost.
  int64_t digest_batches = kDigestBatches;
  nlohmann::json overrides = nullptr;  // DataLoader arguments to force, or null
};

// The folder holding mmprof's sitecustomize.py: $MMPROF_HOOK_PYTHONPATH, the install's
// share/mmprof/python, or the source tree's src/external/python. nullopt when none exists.
std::optional<std::filesystem::path> hook_python_dir();
// libmmprof_cupti_inject.so (built with the CUDA toolkit only), or nullopt.
std::optional<std::filesystem::path> cupti_inject_library();

// The variables to add to the job's environment. `gpu_events`: where the injection library
// writes (null: no GPU tracing). Each thing that could not be set up gets a sentence in
// `unavailable` ("hook: unavailable: ...", "gpu: unavailable: ...").
std::vector<std::pair<std::string, std::string>> job_environment(
    const HookSettings& hook, const std::optional<std::filesystem::path>& gpu_events,
    std::vector<std::string>& unavailable);

// The DataLoader arguments `--set loader.KEY=VALUE` asks for (values from the resolved `tree`,
// so typed and checked as for mmprof's own loader): num_workers, batch_size, prefetch_factor,
// pin_memory (true/false; auto forces nothing), persistent_workers, in_order, shuffle, timeout_s
// (DataLoader's timeout). null when there are none. Throws UsageError for a loader key that only
// mmprof's own loader has, and for a --set outside loader.*, which a user's job does not read.
nlohmann::json dataloader_overrides(const nlohmann::json& tree,
                                    const std::vector<std::string>& sets);

}  // namespace mmprof::external
