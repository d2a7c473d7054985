#include "mmprof/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "util/error.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// Keys whose value may be null or a string (nullable), or an integer or "env".
bool is_nullable_key(const std::string& key) {
  return key == "data.path" || key == "step.model";
}
bool is_env_key(const std::string& key) {
  return key == "dist.rank" || key == "dist.world_size";
}

// A scalar is kept as raw text until the schema says what it is (typed_value below): a path
// that looks like a number stays a path, and `pin_memory: true` is the enum value "true". Quoted
// YAML scalars are strings, so `num_workers: "4"` is refused as YAML would type it.
struct RawScalar {
  std::string text;
  bool quoted = false;
};

std::string type_name(const json& v) {
  if (v.is_boolean()) return "true or false";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a finite number";
  return "a string";
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

// Converts the raw text of `key` to the type of its default. Returns nullopt when it does not fit.
std::optional<json> typed_value(const std::string& key, const json& def, const RawScalar& scalar) {
  const std::string& raw = scalar.text;
  if (is_nullable_key(key)) return !scalar.quoted && is_null_text(raw) ? json(nullptr) : json(raw);
  if (is_env_key(key) && raw == "env") return json(raw);
  if (def.is_string() && !is_env_key(key)) return json(raw);
  if (scalar.quoted) return std::nullopt;
  if (def.is_boolean()) {
    if (raw == "true" || raw == "false") return json(raw == "true");
    return std::nullopt;
  }
  if (def.is_number_integer() || is_env_key(key)) {
    if (auto v = parse_int(raw)) return json(*v);
    return std::nullopt;
  }
  if (auto v = parse_finite(raw)) return json(*v);
  return std::nullopt;
}

json check_type(const std::string& key, const json& def, const RawScalar& scalar,
                const std::string& where) {
  auto typed = typed_value(key, def, scalar);
  if (!typed) {
    throw UsageError(fmt::format(
        "{}: {} must be {}, got {}", where, key,
        is_env_key(key) ? "an integer or env" : type_name(def),
        scalar.quoted ? "the string \"" + scalar.text + "\"" : "\"" + scalar.text + "\""));
  }
  return *typed;
}

std::string known_keys(const json& section) {
  std::string out;
  for (const auto& [k, v] : section.items()) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string join_key(const std::string& prefix, const std::string& k) {
  return prefix.empty() ? k : prefix + "." + k;
}

// The default-tree node for `k` under `tree`, or a UsageError naming the key and its neighbours.
json& known_child(json& tree, const std::string& k, const std::string& key,
                  const std::string& where) {
  if (!tree.is_object() || !tree.contains(k)) {
    throw UsageError(
        fmt::format("{}: unknown config key '{}'{}", where, key,
                    tree.is_object() ? " (known here: " + known_keys(tree) + ")" : ""));
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
      node = check_type(key, node, RawScalar{v.IsNull() ? "" : v.Scalar(), v.Tag() == "!"}, where);
    }
  }
}

template <typename E>
E parse_enum(const json& tree, const std::string& section, const std::string& key,
             std::initializer_list<std::pair<const char*, E>> options) {
  const std::string value = tree.at(section).at(key).get<std::string>();
  std::string names;
  for (const auto& [name, e] : options) {
    if (value == name) return e;
    if (!names.empty()) names += " | ";
    names += name;
  }
  throw UsageError(fmt::format("{}.{} must be one of {}, got '{}'", section, key, names, value));
}

int get_int(const json& tree, const char* section, const char* key, int lo, int hi) {
  const auto v = tree.at(section).at(key).get<long long>();
  if (v < lo || v > hi) {
    throw UsageError(fmt::format("{}.{} must be in [{}, {}], got {}", section, key, lo, hi, v));
  }
  return static_cast<int>(v);
}

int resolve_env_int(json& node, const char* env_name, int fallback) {
  if (node.is_number_integer()) return node.get<int>();
  const char* env = std::getenv(env_name);
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
  return json{
      {"data", {{"path", nullptr}, {"layout", "auto"}}},
      {"loader",
       {{"batch_size", 32},
        {"num_workers", 2},
        {"worker_mode", "process"},
        {"prefetch_factor", 2},
        {"persistent_workers", true},
        {"in_order", true},
        {"pin_memory", "auto"},
        {"shuffle", true},
        {"seed", 0},
        {"on_error", "skip"},
        {"on_worker_failure", "respawn"},
        {"max_respawns", 4},
        {"timeout_s", 300.0},
        {"buffer_reuse", true},
        {"huge_pages", false},
        {"pin_workers", false}}},
      {"image",
       {{"size", 224},
        {"dtype", "float32"},
        {"dct_scaling", true},
        {"resizer", "mmprof"},
        {"max_pixels", 178'956'970}}},
      {"video",
       {{"frames", 8},
        {"size", 224},
        {"sampling", "uniform"},
        {"decoder_threads", 1},
        {"reuse_decoder", false},
        {"skip_nonref", true},
        {"max_pixels", 178'956'970}}},
      {"text", {{"seq_len", 77}, {"max_bytes", 1 << 20}}},
      {"step",
       {{"kind", "none"}, {"ms", 0.0}, {"model", nullptr}, {"accum_steps", 1}, {"device", "cpu"}}},
      {"phases", {{"warmup_steps", 10}, {"steps", 100}, {"warmup_s", 0.0}, {"steady_blocks", 0}}},
      {"dist", {{"rank", "env"}, {"world_size", "env"}, {"sync", "none"}}},
      {"metrics", {{"interval_ms", 100}}},
      {"trace", {{"sample_every", 1}, {"max_events", 1'000'000}}},
  };
}

json load_config_tree(const std::string& yaml_path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(yaml_path);
  } catch (const YAML::BadFile&) {
    throw UsageError(fmt::format("cannot read config file {}", yaml_path));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("config file {} is not valid YAML: {}", yaml_path, e.what()));
  }
  return merge_root(root, yaml_path);
}

json parse_config_yaml(const std::string& yaml_text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("config file {} is not valid YAML: {}", where, e.what()));
  }
  return merge_root(root, where);
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
  *node = check_type(key, *node, RawScalar{assignment.substr(eq + 1), false}, "--set");
}

Config resolve_config(json& tree) {
  Config c;
  const auto& t = tree;
  if (!t["data"]["path"].is_null()) c.data.path = t["data"]["path"].get<std::string>();
  c.data.layout = parse_enum<Layout>(
      t, "data", "layout",
      {{"auto", Layout::auto_detect}, {"files", Layout::files}, {"tar", Layout::tar}});

  c.loader.batch_size = get_int(t, "loader", "batch_size", 1, 1 << 16);
  c.loader.num_workers = get_int(t, "loader", "num_workers", 0, 256);
  c.loader.worker_mode =
      parse_enum<WorkerMode>(t, "loader", "worker_mode",
                             {{"process", WorkerMode::process}, {"thread", WorkerMode::thread}});
  c.loader.prefetch_factor = get_int(t, "loader", "prefetch_factor", 1, 64);
  c.loader.persistent_workers = t["loader"]["persistent_workers"].get<bool>();
  c.loader.in_order = t["loader"]["in_order"].get<bool>();
  c.loader.pin_memory = parse_enum<PinMemory>(
      t, "loader", "pin_memory",
      {{"auto", PinMemory::auto_detect}, {"true", PinMemory::on}, {"false", PinMemory::off}});
  c.loader.shuffle = t["loader"]["shuffle"].get<bool>();
  c.loader.seed = static_cast<uint64_t>(get_int(t, "loader", "seed", 0, 1 << 30));
  c.loader.on_error = parse_enum<OnError>(t, "loader", "on_error",
                                          {{"skip", OnError::skip}, {"fail", OnError::fail}});
  c.loader.on_worker_failure = parse_enum<WorkerFailure>(
      t, "loader", "on_worker_failure",
      {{"respawn", WorkerFailure::respawn}, {"fail", WorkerFailure::fail}});
  c.loader.max_respawns = get_int(t, "loader", "max_respawns", 0, 1 << 16);
  c.loader.timeout_s = t["loader"]["timeout_s"].get<double>();
  if (c.loader.timeout_s <= 0) {
    throw UsageError(fmt::format("loader.timeout_s must be > 0 (no wait is unbounded), got {}",
                                 c.loader.timeout_s));
  }
  c.loader.buffer_reuse = t["loader"]["buffer_reuse"].get<bool>();
  c.loader.huge_pages = t["loader"]["huge_pages"].get<bool>();
  c.loader.pin_workers = t["loader"]["pin_workers"].get<bool>();
  if (c.loader.huge_pages && !c.loader.buffer_reuse) {
    throw UsageError(
        "loader.huge_pages=true needs loader.buffer_reuse=true: hugetlbfs pages cannot be "
        "discarded one batch slot at a time");
  }

  c.image.size = get_int(t, "image", "size", 8, 4096);
  c.image.dtype = parse_enum<ImageDType>(
      t, "image", "dtype", {{"uint8", ImageDType::uint8}, {"float32", ImageDType::float32}});
  c.image.dct_scaling = t["image"]["dct_scaling"].get<bool>();
  c.image.resizer = parse_enum<ImageResizer>(
      t, "image", "resizer",
      {{"mmprof", ImageResizer::mmprof}, {"swscale", ImageResizer::swscale}});
  c.image.max_pixels = get_int(t, "image", "max_pixels", 1, INT32_MAX);

  c.video.frames = get_int(t, "video", "frames", 1, 1024);
  c.video.size = get_int(t, "video", "size", 8, 4096);
  c.video.sampling = parse_enum<VideoSampling>(
      t, "video", "sampling",
      {{"uniform", VideoSampling::uniform}, {"random_window", VideoSampling::random_window}});
  c.video.decoder_threads = get_int(t, "video", "decoder_threads", 1, 64);
  c.video.reuse_decoder = t["video"]["reuse_decoder"].get<bool>();
  c.video.skip_nonref = t["video"]["skip_nonref"].get<bool>();
  c.video.max_pixels = get_int(t, "video", "max_pixels", 1, INT32_MAX);
  c.text.seq_len = get_int(t, "text", "seq_len", 1, 1 << 16);
  c.text.max_bytes = get_int(t, "text", "max_bytes", 0, INT32_MAX);

  c.step.kind = parse_enum<StepKind>(t, "step", "kind",
                                     {{"none", StepKind::none},
                                      {"sleep", StepKind::sleep},
                                      {"spin", StepKind::spin},
                                      {"torch", StepKind::torch},
                                      {"gemm", StepKind::gemm}});
  c.step.ms = t["step"]["ms"].get<double>();
  if (c.step.ms < 0) throw UsageError(fmt::format("step.ms must be >= 0, got {}", c.step.ms));
  if (!t["step"]["model"].is_null()) c.step.model = t["step"]["model"].get<std::string>();
  c.step.accum_steps = get_int(t, "step", "accum_steps", 1, 1 << 16);
  c.step.device = t["step"]["device"].get<std::string>();
  resolve_gpu_step(c.step);

  c.phases.warmup_steps = get_int(t, "phases", "warmup_steps", 0, 1 << 24);
  c.phases.steps = get_int(t, "phases", "steps", 1, 1 << 24);
  c.phases.warmup_s = t["phases"]["warmup_s"].get<double>();
  c.phases.steady_blocks = get_int(t, "phases", "steady_blocks", 0, 1 << 10);

  c.metrics.interval_ms = get_int(t, "metrics", "interval_ms", 0, 60'000);
  c.trace.sample_every = get_int(t, "trace", "sample_every", 1, INT32_MAX);
  c.trace.max_events = get_int(t, "trace", "max_events", 1, INT32_MAX);

  c.dist.world_size = resolve_env_int(tree["dist"]["world_size"], "WORLD_SIZE", 1);
  c.dist.rank = resolve_env_int(tree["dist"]["rank"], "RANK", 0);
  if (c.dist.world_size < 1 || c.dist.rank < 0 || c.dist.rank >= c.dist.world_size) {
    throw UsageError(fmt::format("dist.rank ({}) must be in [0, dist.world_size ({}))", c.dist.rank,
                                 c.dist.world_size));
  }
  c.dist.sync = t["dist"]["sync"].get<std::string>();
  if (c.dist.sync != "none") {
    if (c.dist.sync != "barrier" && c.dist.sync != "allreduce") {
      throw UsageError(fmt::format("dist.sync must be one of none | barrier | allreduce, got '{}'",
                                   c.dist.sync));
    }
    throw UnavailableError(fmt::format(
        "dist.sync={} is unavailable: multi-rank synchronisation is not built yet, use none",
        c.dist.sync));
  }
  tree["dist"]["rank"] = c.dist.rank;
  tree["dist"]["world_size"] = c.dist.world_size;
  return c;
}

}  // namespace mmprof
