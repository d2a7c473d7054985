#include "mmprof/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "config/config_keys.hpp"
#include "config/yaml_file.hpp"
#include "util/did_you_mean.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// "loader.num_workers" -> "loader/num_workers" (a JSON pointer's path).
std::string key_path(std::string key) {
  std::replace(key.begin(), key.end(), '.', '/');
  return key;
}

// The key table's row of `key`, which the default tree (built from the same table) has.
const config::KeySpec& spec(const std::string& key) {
  const config::KeySpec* k = config::find_key(key);
  if (k == nullptr) throw std::logic_error("config key " + key + " is not in the key table");
  return *k;
}

// A scalar is kept as raw text until the schema says what it is (typed_value below): a path
// that looks like a number stays a path, and `pin_memory: true` is the enum value "true". Quoted
// YAML scalars are strings, so `num_workers: "4"` is refused as YAML would type it.
struct RawScalar {
  std::string text;
  bool quoted = false;
};

std::string type_name(const config::KeySpec& k) {
  switch (k.type) {
    case config::KeyType::boolean:
      return "true or false";
    case config::KeyType::integer:
      return k.env.empty() ? "an integer" : "an integer or env";
    case config::KeyType::number:
      return "a finite number";
    default:
      return "a string";
  }
}

bool is_null_text(const std::string& s) {
  return s.empty() || s == "null" || s == "~";
}

std::optional<long long> parse_int(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) return std::nullopt;
  return v;
}

std::optional<double> parse_finite(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Converts the raw text of `key` to the type the key table gives it. nullopt when it does not fit.
std::optional<json> typed_value(const config::KeySpec& k, const RawScalar& scalar) {
  const std::string& raw = scalar.text;
  switch (k.type) {
    case config::KeyType::path:
      return !scalar.quoted && is_null_text(raw) ? json(nullptr) : json(raw);
    case config::KeyType::text:
    case config::KeyType::choice:
      return json(raw);
    case config::KeyType::boolean:
      if (scalar.quoted || (raw != "true" && raw != "false")) return std::nullopt;
      return json(raw == "true");
    case config::KeyType::integer:
      if (!k.env.empty() && raw == "env") return json(raw);
      if (scalar.quoted) return std::nullopt;
      if (auto v = parse_int(raw)) return json(*v);
      return std::nullopt;
    case config::KeyType::number:
      if (scalar.quoted) return std::nullopt;
      if (auto v = parse_finite(raw)) return json(*v);
      return std::nullopt;
  }
  return std::nullopt;
}

json check_type(const std::string& key, const RawScalar& scalar, const std::string& where) {
  const config::KeySpec& k = spec(key);
  auto typed = typed_value(k, scalar);
  if (!typed) {
    throw UsageError(fmt::format(
        "{}: {} must be {}, got {}", where, key, type_name(k),
        scalar.quoted ? "the string \"" + scalar.text + "\"" : "\"" + scalar.text + "\""));
  }
  return *typed;
}

std::vector<std::string> key_names(const json& section) {
  std::vector<std::string> names;
  for (const auto& [k, v] : section.items())
    names.push_back(k);
  return names;
}

std::string known_keys(const json& section) {
  std::string out;
  for (const auto& k : key_names(section))
    out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string join_key(const std::string& prefix, const std::string& k) {
  return prefix.empty() ? k : prefix + "." + k;
}

// The default-tree node for `k` under `tree`, or a UsageError naming the key and its neighbours.
json& known_child(json& tree, const std::string& k, const std::string& key,
                  const std::string& where) {
  if (!tree.is_object() || !tree.contains(k)) {
    throw UsageError(fmt::format(
        "{}: unknown config key '{}'{}", where, key,
        tree.is_object()
            ? " (known here: " + known_keys(tree) + ")" +
                  did_you_mean(k, key_names(tree), key.substr(0, key.size() - k.size()), "; ")
            : ""));
  }
  return tree[k];
}

void merge(json& tree, const YAML::Node& overlay, const std::string& prefix,
           const std::string& where) {
  for (const auto& kv : overlay) {
    const std::string k = kv.first.as<std::string>();
    const std::string key = join_key(prefix, k);
    json& node = known_child(tree, k, key, where);
    const YAML::Node& v = kv.second;
    if (node.is_object()) {
      if (!v.IsMap()) throw UsageError(fmt::format("{}: {} must be a mapping", where, key));
      merge(node, v, key, where);
    } else if (v.IsMap() || v.IsSequence()) {
      throw UsageError(fmt::format("{}: {} must be a single value", where, key));
    } else {
      // yaml-cpp tags quoted scalars "!"; a null node (`key:` alone) is empty text.
      node = check_type(key, RawScalar{v.IsNull() ? "" : v.Scalar(), v.Tag() == "!"}, where);
    }
  }
}

const json& value_at(const json& tree, const std::string& key) {
  return tree.at(json::json_pointer("/" + key_path(key)));
}
bool bool_at(const json& tree, const std::string& key) {
  return value_at(tree, key).get<bool>();
}
// The value of number key `key`, within the table's range.
double number_at(const json& tree, const std::string& key) {
  const config::KeySpec& k = spec(key);
  const double v = value_at(tree, key).get<double>();
  if (!(v >= k.min && v <= k.max))
    throw UsageError(fmt::format("{} must be in [{}, {}], got {}", key, k.min, k.max, v));
  return v;
}
// A path or model: nullopt for null.
std::optional<std::string> path_at(const json& tree, const std::string& key) {
  const json& v = value_at(tree, key);
  return v.is_null() ? std::nullopt : std::optional(v.get<std::string>());
}

// The value of choice key `key`, checked against the table's choices and mapped to E.
template <typename E>
E choice_at(const json& tree, const std::string& key,
            std::initializer_list<std::pair<const char*, E>> mapping) {
  const config::KeySpec& k = spec(key);
  const std::string value = value_at(tree, key).get<std::string>();
  if (std::find(k.choices.begin(), k.choices.end(), value) == k.choices.end()) {
    std::string names;
    for (const auto& c : k.choices)
      names += (names.empty() ? "" : " | ") + c;
    throw UsageError(fmt::format("{} must be one of {}, got '{}'", key, names, value));
  }
  for (const auto& [name, e] : mapping)
    if (value == name) return e;
  throw std::logic_error("config key " + key + ": choice '" + value + "' has no value in code");
}

// The value of integer key `key`, within the table's range.
int64_t int64_at(const json& tree, const std::string& key) {
  const config::KeySpec& k = spec(key);
  const auto v = value_at(tree, key).get<long long>();
  if (static_cast<double>(v) < k.min || static_cast<double>(v) > k.max) {
    throw UsageError(fmt::format("{} must be in [{}, {}], got {}", key, k.min, k.max, v));
  }
  return v;
}
// The same for keys whose range fits an int.
int int_at(const json& tree, const std::string& key) {
  return static_cast<int>(int64_at(tree, key));
}

// An integer key that may be "env": from the key table's environment variable, else `fallback`.
int resolve_env_int(const json& tree, const std::string& key, int fallback) {
  const json& node = value_at(tree, key);
  if (node.is_number_integer()) return node.get<int>();
  const std::string env_name(spec(key).env);
  const char* env = std::getenv(env_name.c_str());
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0) {
    throw UsageError(
        fmt::format("environment variable {}='{}' is not a non-negative integer", env_name, env));
  }
  return static_cast<int>(v);
}

// step.device "gpu" means "cuda". step.kind=gemm runs on the GPU only (CUDA device 0), so its
// default device cpu becomes cuda, and it needs a duration to calibrate against.
void resolve_gpu_step(StepConfig& step) {
  if (step.device == "gpu") step.device = "cuda";
  if (step.kind != StepKind::gemm) return;
  if (!(step.ms > 0)) {
    throw UsageError(fmt::format(
        "step.kind=gemm needs step.ms > 0 (the GPU time per micro-batch), got {}", step.ms));
  }
  if (step.device == "cpu") step.device = "cuda";
  if (step.device != "cuda" && step.device != "cuda:0") {
    throw UsageError(fmt::format(
        "step.kind=gemm runs on CUDA device 0: step.device must be cuda or cuda:0, got '{}'",
        step.device));
  }
}

}  // namespace

namespace {

json merge_root(const YAML::Node& root, const std::string& where) {
  json tree = default_config_tree();
  if (root.IsNull()) return tree;
  if (!root.IsMap()) throw UsageError(fmt::format("config file {} must be a mapping", where));
  try {
    merge(tree, root, "", where);
  } catch (const YAML::Exception& e) {
    // A key that is not a scalar (`[a, b]: 1`) makes yaml-cpp's conversion to a name throw.
    throw UsageError(
        fmt::format("config file {} has a key that is not a name: {}", where, e.what()));
  }
  return tree;
}

}  // namespace

bool decodes_on_device(const Config& config, Modality modality) noexcept {
  const DecodeDevice d =
      modality == Modality::video ? config.video.decode_device : config.image.decode_device;
  return d == DecodeDevice::gpu;
}

const char* to_string(StepKind kind) noexcept {
  switch (kind) {
    case StepKind::none:
      return "none";
    case StepKind::sleep:
      return "sleep";
    case StepKind::spin:
      return "spin";
    case StepKind::torch:
      return "torch";
    case StepKind::gemm:
      return "gemm";
  }
  return "unknown";
}

json default_config_tree() {
  json tree = json::object();
  for (const auto& k : config::key_table())
    tree[json::json_pointer("/" + key_path(std::string(k.key)))] = k.default_value;
  return tree;
}

json load_config_tree(const std::string& yaml_path) {
  return merge_root(config::load_yaml_file(yaml_path, "config file"), yaml_path);
}

json parse_config_yaml(const std::string& yaml_text, const std::string& where) {
  return merge_root(config::load_yaml_text(yaml_text, "config file " + where), where);
}

void apply_override(json& tree, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(fmt::format("--set '{}' must look like key.sub=value", assignment));
  }
  const std::string key = assignment.substr(0, eq);
  json* node = &tree;
  std::string prefix;
  for (size_t start = 0;;) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (part.empty()) throw UsageError(fmt::format("--set '{}': empty key component", assignment));
    prefix = join_key(prefix, part);
    node = &known_child(*node, part, prefix, "--set");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_object()) {
    throw UsageError(fmt::format("--set {}: {} is a section; set one of its keys ({})", key, key,
                                 known_keys(*node)));
  }
  *node = check_type(key, RawScalar{assignment.substr(eq + 1), false}, "--set");
}

namespace {

// data.*: where the samples are and how they are read.
void resolve_data(const json& t, Config& c) {
  c.data.path = path_at(t, "data.path");
  c.data.layout = choice_at<Layout>(t, "data.layout",
                                    {{"auto", Layout::auto_detect},
                                     {"files", Layout::files},
                                     {"tar", Layout::tar},
                                     {"tar_stream", Layout::tar}});
  c.data.stream = value_at(t, "data.layout") == "tar_stream";
  c.data.shuffle_buffer = int_at(t, "data.shuffle_buffer");
  c.data.cache = choice_at<DataCache>(
      t, "data.cache",
      {{"as-is", DataCache::as_is}, {"warm", DataCache::warm}, {"cold", DataCache::cold}});
  c.data.remote.concurrency = int_at(t, "data.remote.concurrency");
  c.data.remote.retries = int_at(t, "data.remote.retries");
  c.data.remote.timeout_s = number_at(t, "data.remote.timeout_s");
}

// loader.*: the worker pool, batches and their memory.
void resolve_loader(const json& t, Config& c) {
  c.loader.batch_size = int_at(t, "loader.batch_size");
  c.loader.num_workers = int_at(t, "loader.num_workers");
  c.loader.worker_mode = choice_at<WorkerMode>(
      t, "loader.worker_mode", {{"process", WorkerMode::process}, {"thread", WorkerMode::thread}});
  c.loader.prefetch_factor = int_at(t, "loader.prefetch_factor");
  c.loader.persistent_workers = bool_at(t, "loader.persistent_workers");
  c.loader.in_order = bool_at(t, "loader.in_order");
  c.loader.pin_memory = choice_at<PinMemory>(
      t, "loader.pin_memory",
      {{"auto", PinMemory::auto_detect}, {"true", PinMemory::on}, {"false", PinMemory::off}});
  c.loader.shuffle = bool_at(t, "loader.shuffle");
  c.loader.seed = static_cast<uint64_t>(int_at(t, "loader.seed"));
  c.loader.on_error =
      choice_at<OnError>(t, "loader.on_error", {{"skip", OnError::skip}, {"fail", OnError::fail}});
  c.loader.on_worker_failure = choice_at<WorkerFailure>(
      t, "loader.on_worker_failure",
      {{"respawn", WorkerFailure::respawn}, {"fail", WorkerFailure::fail}});
  c.loader.max_respawns = int_at(t, "loader.max_respawns");
  c.loader.timeout_s = number_at(t, "loader.timeout_s");
  c.loader.buffer_reuse = bool_at(t, "loader.buffer_reuse");
  c.loader.huge_pages = bool_at(t, "loader.huge_pages");
  c.loader.pin_workers = bool_at(t, "loader.pin_workers");
  if (c.loader.huge_pages && !c.loader.buffer_reuse) {
    throw UsageError(
        "loader.huge_pages=true needs loader.buffer_reuse=true: hugetlbfs pages cannot be "
        "discarded one batch slot at a time");
  }
}

// image.*, video.*, decode.*, text.*: how each modality is decoded and shaped.
void resolve_media(const json& t, Config& c) {
  c.image.size = int_at(t, "image.size");
  c.image.dtype = choice_at<ImageDType>(
      t, "image.dtype", {{"uint8", ImageDType::uint8}, {"float32", ImageDType::float32}});
  c.image.dct_scaling = bool_at(t, "image.dct_scaling");
  c.image.dct_scales = choice_at<ImageDctScales>(
      t, "image.dct_scales",
      {{"halves", ImageDctScales::halves}, {"eighths", ImageDctScales::eighths}});
  c.image.crop_decode = bool_at(t, "image.crop_decode");
  c.image.simd = bool_at(t, "image.simd");
  c.image.resizer = choice_at<ImageResizer>(
      t, "image.resizer", {{"mmprof", ImageResizer::mmprof}, {"swscale", ImageResizer::swscale}});
  c.image.max_pixels = int_at(t, "image.max_pixels");
  c.image.max_bytes = int64_at(t, "image.max_bytes");
  c.image.max_decode_ms = int_at(t, "image.max_decode_ms");

  c.video.frames = int_at(t, "video.frames");
  c.video.size = int_at(t, "video.size");
  c.video.sampling = choice_at<VideoSampling>(
      t, "video.sampling",
      {{"uniform", VideoSampling::uniform}, {"random_window", VideoSampling::random_window}});
  c.video.decoder_threads = int_at(t, "video.decoder_threads");
  c.video.reuse_decoder = bool_at(t, "video.reuse_decoder");
  c.video.skip_nonref = bool_at(t, "video.skip_nonref");
  c.video.max_pixels = int_at(t, "video.max_pixels");
  c.video.max_bytes = int64_at(t, "video.max_bytes");
  c.video.max_decode_ms = int_at(t, "video.max_decode_ms");
  c.decode.device = choice_at<DecodeDevice>(
      t, "decode.device", {{"cpu", DecodeDevice::cpu}, {"gpu", DecodeDevice::gpu}});
  c.decode.gpu_backend = choice_at<GpuDecodeBackend>(
      t, "decode.gpu_backend",
      {{"nvdec", GpuDecodeBackend::nvdec}, {"emulated", GpuDecodeBackend::emulated}});
  c.decode.staging_mib = int_at(t, "decode.staging_mib");
  const auto modality_device = [&](const char* key) {
    return choice_at<DecodeDevice>(
        t, key,
        {{"inherit", c.decode.device}, {"cpu", DecodeDevice::cpu}, {"gpu", DecodeDevice::gpu}});
  };
  c.image.decode_device = modality_device("image.decode_device");
  c.video.decode_device = modality_device("video.decode_device");
  c.text.seq_len = int_at(t, "text.seq_len");
  c.text.max_bytes = int_at(t, "text.max_bytes");
}

// step.*, phases.*, metrics.*, trace.*: the consumer and what is measured.
void resolve_run(const json& t, Config& c) {
  c.step.kind = choice_at<StepKind>(t, "step.kind",
                                    {{"none", StepKind::none},
                                     {"sleep", StepKind::sleep},
                                     {"spin", StepKind::spin},
                                     {"torch", StepKind::torch},
                                     {"gemm", StepKind::gemm}});
  c.step.ms = number_at(t, "step.ms");
  c.step.model = path_at(t, "step.model");
  c.step.accum_steps = int_at(t, "step.accum_steps");
  c.step.device = value_at(t, "step.device").get<std::string>();
  resolve_gpu_step(c.step);

  c.phases.warmup_steps = int_at(t, "phases.warmup_steps");
  c.phases.steps = int_at(t, "phases.steps");
  c.phases.warmup_s = number_at(t, "phases.warmup_s");
  c.phases.steady_blocks = int_at(t, "phases.steady_blocks");

  c.metrics.interval_ms = int_at(t, "metrics.interval_ms");
  c.trace.sample_every = int_at(t, "trace.sample_every");
  c.trace.max_events = int_at(t, "trace.max_events");
}

// dist.*: this rank among the ranks (each from the environment when unset).
void resolve_dist(const json& t, Config& c) {
  c.dist.world_size = resolve_env_int(t, "dist.world_size", 1);
  c.dist.rank = resolve_env_int(t, "dist.rank", 0);
  if (c.dist.world_size < 1 || c.dist.rank < 0 || c.dist.rank >= c.dist.world_size) {
    throw UsageError(fmt::format("dist.rank ({}) must be in [0, dist.world_size ({}))", c.dist.rank,
                                 c.dist.world_size));
  }
  c.dist.sync = choice_at<std::string>(
      t, "dist.sync", {{"none", "none"}, {"barrier", "barrier"}, {"allreduce", "allreduce"}});
  c.dist.allreduce_mb = number_at(t, "dist.allreduce_mb");
  c.dist.timeout_s = number_at(t, "dist.timeout_s");
}

}  // namespace

Config resolve_config(json& tree) {
  Config c;
  resolve_data(tree, c);
  resolve_loader(tree, c);
  resolve_media(tree, c);
  resolve_run(tree, c);
  resolve_dist(tree, c);
  tree["dist"]["rank"] = c.dist.rank;
  tree["dist"]["world_size"] = c.dist.world_size;
  return c;
}

}  // namespace mmprof
