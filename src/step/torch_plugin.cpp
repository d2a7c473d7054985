#include "step/torch_plugin.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "mmprof/error.hpp"
#include "util/shipped_files.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUnavailable = "step.kind=torch is unavailable: ";

const char* recorded_build_path() {
#ifdef MMPROF_TORCH_PLUGIN_PATH
  return MMPROF_TORCH_PLUGIN_PATH;
#else
  return nullptr;
#endif
}

}  // namespace

// dlopen()s each candidate in turn and returns the first that exports the factory. Default
// locations that do not exist are skipped quietly; the explicit $MMPROF_TORCH_PLUGIN is not.
LoadedTorchPlugin load_torch_plugin(const char* symbol_name, const std::string& unavailable) {
  const char* env_value = std::getenv(kTorchPluginEnv);
  const bool explicit_path = env_value != nullptr && *env_value != '\0';
  const auto candidates = torch_plugin_candidates(
      env_value, executable_dir(), torch_plugin_install_reldir(), recorded_build_path());
  std::string first_error;
  for (const fs::path& path : candidates) {
    std::error_code ec;
    if (!explicit_path && !fs::exists(path, ec)) continue;
    // RTLD_LOCAL: libtorch's symbols stay out of the global namespace mmprof's own code resolves
    // against. The handle is never closed (see TorchPluginStep).
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      if (first_error.empty()) first_error = dlerror();
      continue;
    }
    void* symbol = dlsym(handle, symbol_name);
    if (symbol == nullptr) {
      if (first_error.empty()) {
        first_error = fmt::format(
            "{} does not export {} (not an mmprof torch plugin of this "
            "version)",
            path.string(), symbol_name);
      }
      continue;
    }
    return LoadedTorchPlugin{symbol, path};
  }
  if (first_error.empty()) {
    std::string looked;
    for (const fs::path& path : candidates)
      looked += (looked.empty() ? "" : ", ") + path.string();
    first_error = fmt::format("{} not found (looked at {}; set {} to its path)", kTorchPluginFile,
                              looked.empty() ? "nothing" : looked, kTorchPluginEnv);
  }
  throw UnavailableError(unavailable + first_error + kTorchPluginHint);
}

void throw_torch_status(MmprofTorchStatus status, const std::string& message) {
  switch (status) {
    case MMPROF_TORCH_USAGE:
      throw UsageError(message);
    case MMPROF_TORCH_UNAVAILABLE:
      throw UnavailableError(message);
    case MMPROF_TORCH_OK:
    case MMPROF_TORCH_FAILURE:
      break;
  }
  throw RunError(message);
}

namespace {

MmprofTorchStepParams make_params(const Config& config, const char* model, int threads) {
  MmprofTorchStepParams p{};
  p.abi_version = MMPROF_TORCH_ABI_VERSION;
  p.model = model;
  p.device = config.step.device.c_str();
  p.accum_steps = config.step.accum_steps;
  p.num_threads = threads;
  p.dtype = config.image.dtype == ImageDType::uint8 ? MMPROF_TORCH_UINT8 : MMPROF_TORCH_FLOAT32;
  p.image_size = config.image.size;
  p.video_frames = config.video.frames;
  p.video_size = config.video.size;
  p.seed = config.loader.seed;
  return p;
}

// Class ids: the sample's dataset index % 10, so a sample keeps its label across epochs and
// shuffles (learnable, deterministic). Rows without a SampleInfo (the synthetic batches of the
// compute phase) get row % 10.
void fill_labels(std::vector<int64_t>& labels, uint32_t rows, const Batch& batch,
                 Modality modality) {
  labels.resize(rows);
  for (uint32_t r = 0; r < rows; ++r)
    labels[r] = r % 10;
  for (const SampleInfo& s : batch.samples) {
    if (s.modality == modality && s.row >= 0 && static_cast<uint32_t>(s.row) < rows) {
      labels[static_cast<size_t>(s.row)] = s.index % 10;
    }
  }
}

}  // namespace

const char* torch_plugin_install_reldir() {
#ifdef MMPROF_PLUGIN_INSTALL_RELDIR
  return MMPROF_PLUGIN_INSTALL_RELDIR;
#else
  return "../lib/mmprof";
#endif
}

std::vector<fs::path> torch_plugin_candidates(const char* env_value, const fs::path& exe_dir,
                                              const char* install_reldir, const char* build_path) {
  return shipped_file_candidates(env_value, exe_dir, kTorchPluginFile, install_reldir, build_path);
}

int torch_threads_from_env(const char* env_value) {
  if (env_value == nullptr || *env_value == '\0') return 1;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(env_value, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > 4096) {
    throw UsageError(
        fmt::format("{} must be a positive integer, got '{}'", kTorchThreadsEnv, env_value));
  }
  return static_cast<int>(n);
}

TorchPluginStep::TorchPluginStep(const Config& config) : last_loss_(std::nan("")) {
  const int threads = torch_threads_from_env(std::getenv(kTorchThreadsEnv));
  const LoadedTorchPlugin plugin = load_torch_plugin(MMPROF_TORCH_FACTORY_SYMBOL, kUnavailable);
  plugin_path_ = plugin.path;
  const auto create = reinterpret_cast<MmprofTorchStepCreateFn>(plugin.factory);
  const std::string model = config.step.model.value_or("small_cnn");
  const MmprofTorchStepParams params = make_params(config, model.c_str(), threads);
  char error[1024] = {};
  const MmprofTorchStatus status = create(&params, &handle_, error, sizeof error);
  if (status != MMPROF_TORCH_OK) throw_torch_status(status, error);
  if (handle_.vtable == nullptr || handle_.vtable->abi_version != MMPROF_TORCH_ABI_VERSION) {
    // Not destroyed: a vtable of another ABI version cannot be trusted to do it.
    handle_ = {};
    throw UnavailableError(fmt::format("{}{} speaks another plugin ABI than version {}{}",
                                       kUnavailable, plugin_path_.string(),
                                       MMPROF_TORCH_ABI_VERSION, kTorchPluginHint));
  }
}

TorchPluginStep::~TorchPluginStep() {
  if (handle_.vtable != nullptr) handle_.vtable->destroy(handle_.self);
}

void TorchPluginStep::run(const Batch& batch) {
  fill_labels(image_labels_, batch.n_images, batch, Modality::image);
  fill_labels(video_labels_, batch.n_videos, batch, Modality::video);
  const MmprofTorchBatch in{batch.n_images, batch.n_videos,       batch.images,
                            batch.videos,   image_labels_.data(), video_labels_.data()};
  MmprofTorchRunResult result{};
  char error[1024] = {};
  const MmprofTorchStatus status =
      handle_.vtable->run(handle_.self, &in, &result, error, sizeof error);
  if (status != MMPROF_TORCH_OK) throw_torch_status(status, error);
  last_loss_ = result.loss;
}

std::string TorchPluginStep::describe() const {
  return handle_.vtable->describe(handle_.self);
}

}  // namespace mmprof
