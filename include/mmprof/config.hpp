#pragma once
// The run configuration: the keys of DESIGN.md, with defaults, loaded from YAML and overridden by
// `--set a.b=c`. The resolved tree (every key, after overrides) is saved in manifest.json.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mmprof {

enum class Layout { auto_detect, files, tar };
enum class WorkerMode { process, thread };
enum class OnError { skip, fail };
enum class PinMemory { auto_detect, on, off };
enum class StepKind { none, sleep, spin, torch };
enum class ImageDType { uint8, float32 };
enum class VideoSampling { uniform, random_window };

struct DataConfig {
  std::optional<std::string> path;  // nullopt = the embedded default dataset
  Layout layout = Layout::auto_detect;
};

struct LoaderConfig {
  int batch_size = 32;
  int num_workers = 2;
  WorkerMode worker_mode = WorkerMode::process;
  int prefetch_factor = 2;
  bool persistent_workers = true;
  bool in_order = true;
  PinMemory pin_memory = PinMemory::auto_detect;
  bool shuffle = true;
  uint64_t seed = 0;
  OnError on_error = OnError::skip;
};

struct ImageConfig {
  int size = 224;
  ImageDType dtype = ImageDType::float32;
  bool dct_scaling = true;
};

struct VideoConfig {
  int frames = 8;
  int size = 224;
  VideoSampling sampling = VideoSampling::uniform;
  int decoder_threads = 1;
};

struct TextConfig {
  int seq_len = 77;
};

struct StepConfig {
  StepKind kind = StepKind::none;
  double ms = 0;
  std::optional<std::string> model;
  int accum_steps = 1;
  std::string device = "cpu";
};

struct PhasesConfig {
  int warmup_steps = 10;
  int steps = 100;
  double warmup_s = 0;  // 0 = by steps only; else warm-up lasts at least this long too
};

struct DistConfig {
  int rank = 0;  // resolved from RANK / WORLD_SIZE when the config says "env"
  int world_size = 1;
  std::string sync = "none";
};

// Resource sampling (resources.csv, host.csv): the period of the process-tree sampler.
struct MetricsConfig {
  int interval_ms = 100;  // 0 = only at phase boundaries
};

struct Config {
  DataConfig data;
  LoaderConfig loader;
  ImageConfig image;
  VideoConfig video;
  TextConfig text;
  StepConfig step;
  PhasesConfig phases;
  DistConfig dist;
  MetricsConfig metrics;
};

const char* to_string(StepKind kind) noexcept;

// The default tree with every known key (the schema --set validates against).
nlohmann::json default_config_tree();

// Loads a YAML file over the defaults. Unknown keys and badly typed values throw UsageError
// naming the file and key.
nlohmann::json load_config_tree(const std::string& yaml_path);

// Applies "a.b=c" (c parsed as YAML scalar, typed by the default's type). Throws UsageError.
void apply_override(nlohmann::json& tree, const std::string& assignment);

// Resolves "env" fields (dist.rank, dist.world_size from RANK/WORLD_SIZE), validates ranges and
// converts to the typed struct. Throws UsageError naming the key.
Config resolve_config(nlohmann::json& tree);

}  // namespace mmprof
