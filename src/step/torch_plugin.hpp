#pragma once
// The host side of the torch step: finds libmmprof_torch_step.so, dlopens it only when a torch
// step is asked for (so --help, workers and other subcommands never load libtorch), and adapts its
// C ABI (torch_plugin_abi.hpp) to mmprof::Step.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "step/step.hpp"
#include "step/torch_plugin_abi.hpp"

namespace mmprof {

inline constexpr const char* kTorchPluginFile = "libmmprof_torch_step.so";
inline constexpr const char* kTorchPluginEnv = "MMPROF_TORCH_PLUGIN";
inline constexpr const char* kTorchThreadsEnv = "MMPROF_TORCH_THREADS";

// The plugin folder of an install relative to the folder of the installed mmprof: "../lib/mmprof"
// for bin/ and lib/mmprof/ (cmake/MmprofInstall.cmake), compiled in by CMake.
const char* torch_plugin_install_reldir();

// Where to look for the plugin, in order. A set $MMPROF_TORCH_PLUGIN is the only candidate: the
// user named a file, and silently loading another one would measure the wrong library. Otherwise
// next to the executable (the build tree: CMake puts the plugin beside mmprof; or a copy placed
// there), then `install_reldir` from the executable's folder (an install: PREFIX/bin/mmprof loads
// PREFIX/lib/mmprof/libmmprof_torch_step.so), then the path the build recorded (for test binaries
// in other folders). Empty inputs are skipped.
std::vector<std::filesystem::path> torch_plugin_candidates(const char* env_value,
                                                           const std::filesystem::path& exe_dir,
                                                           const char* install_reldir,
                                                           const char* build_path);

inline constexpr const char* kTorchPluginHint =
    " (build with libtorch-dev installed, and libgloo-dev for several ranks)";

// The plugin, loaded once, and one of its factories.
struct LoadedTorchPlugin {
  void* factory = nullptr;  // the symbol `symbol_name`
  std::filesystem::path path;
};

// dlopen()s the first candidate that exports `symbol_name` (kept loaded for the process's life);
// throws UnavailableError starting with `unavailable` ("step.kind=torch is unavailable: ").
LoadedTorchPlugin load_torch_plugin(const char* symbol_name, const std::string& unavailable);

// A plugin call's failure as mmprof's error of the same class (UsageError, UnavailableError,
// else RunError) with the plugin's message.
[[noreturn]] void throw_torch_status(MmprofTorchStatus status, const std::string& message);

// Intra-op threads for libtorch from $MMPROF_TORCH_THREADS (null or empty: 1, because the
// loader's workers own the other cores). Throws UsageError for anything but a positive integer.
int torch_threads_from_env(const char* env_value);

// A Step backed by the plugin. Keeps the plugin loaded for the life of the process: libtorch
// registers operators and starts thread pools that cannot be unloaded safely, so it is never
// dlclose'd.
class TorchPluginStep final : public Step {
 public:
  // Loads the plugin and creates the step; throws UnavailableError (no plugin, no CUDA) or
  // UsageError (bad step.model / step.device).
  explicit TorchPluginStep(const Config& config);
  ~TorchPluginStep() override;
  TorchPluginStep(const TorchPluginStep&) = delete;
  TorchPluginStep& operator=(const TorchPluginStep&) = delete;

  void run(const Batch& batch) override;
  std::string describe() const override;
  bool includes_model_compute() const override { return true; }

  // Mean loss of the last micro-batch (before its update); NaN before the first one.
  double last_loss() const noexcept { return last_loss_; }
  // The file the plugin was loaded from.
  const std::filesystem::path& plugin_path() const noexcept { return plugin_path_; }

 private:
  MmprofTorchStepHandle handle_{};
  std::filesystem::path plugin_path_;
  std::vector<int64_t> image_labels_, video_labels_;  // reused between batches
  double last_loss_;
};

}  // namespace mmprof
