#include "mmprof/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fmt/format.h>

#include "util/error.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// Keys whose value may be null or a string (nullable), or an integer or "env".
bool is_nullable_key(const std::string& key) { return key == "data.path" || key == "step.model"; }
bool is_env_key(const std::string& key) { return key == "dist.rank" || key == "dist.world_size"; }

json yaml_scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!" || s.empty()) return s;  // quoted string
  if (s == "null" || s == "~") return nullptr;
  if (s == "true" || s == "false") return s == "true";
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() && *end == '\0') return i;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && *end == '\0') return d;
  return s;
}

json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      return yaml_scalar_to_json(node);
    default:
      return nullptr;
  }
}

std::string type_name(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  return "null";
}

// Checks `value` against the default's type for `key`, converting ints to floats where a number
// is expected. Returns the value to store.
json check_type(const std::string& key, const json& def, const json& value,
                const std::string& where) {
  if (is_nullable_key(key) && (value.is_null() || value.is_string())) return value;
  if (is_env_key(key) && (value == "env" || value.is_number_integer())) return value;
  if (def.is_number_float() && value.is_number()) return value.get<double>();
  const bool same = (def.is_boolean() && value.is_boolean()) ||
                    (def.is_number_integer() && value.is_number_integer()) ||
                    (def.is_string() && value.is_string());
  if (!same) {
    throw UsageError(fmt::format("{}: {} must be {}, got {}", where, key, type_name(def),
                                 value.is_string() ? "\"" + value.get<std::string>() + "\""
                                                   : value.dump()));
  }
  return value;
}

std::string known_keys(const json& section) {
  std::string out;
  for (const auto& [k, v] : section.items()) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

void merge(json& tree, const json& overlay, const std::string& prefix, const std::string& where) {
  for (const auto& [k, v] : overlay.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (!tree.contains(k)) {
      throw UsageError(fmt::format("{}: unknown config key '{}' (known here: {})", where, key,
                                   known_keys(tree)));
    }
    if (tree[k].is_object()) {
      if (!v.is_object()) throw UsageError(fmt::format("{}: {} must be a mapping", where, key));
      merge(tree[k], v, key, where);
    } else {
      tree[k] = check_type(key, tree[k], v, where);
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
    throw UsageError(fmt::format("environment variable {}='{}' is not a non-negative integer",
                                 env_name, env));
  }
  return static_cast<int>(v);
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
        {"on_error", "skip"}}},
      {"image", {{"size", 224}, {"dtype", "float32"}, {"dct_scaling", true}}},
      {"video",
       {{"frames", 8}, {"size", 224}, {"sampling", "uniform"}, {"decoder_threads", 1}}},
      {"text", {{"seq_len", 77}}},
      {"step",
       {{"kind", "none"},
        {"ms", 0.0},
        {"model", nullptr},
        {"accum_steps", 1},
        {"device", "cpu"}}},
      {"phases", {{"warmup_steps", 10}, {"steps", 100}, {"warmup_s", 0.0}}},
      {"dist", {{"rank", "env"}, {"world_size", "env"}, {"sync", "none"}}},
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
  json tree = default_config_tree();
  if (root.IsNull()) return tree;
  if (!root.IsMap()) throw UsageError(fmt::format("config file {} must be a mapping", yaml_path));
  merge(tree, yaml_to_json(root), "", yaml_path);
  return tree;
}

void apply_override(json& tree, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(fmt::format("--set '{}' must look like key.sub=value", assignment));
  }
  const std::string key = assignment.substr(0, eq);
  YAML::Node node;
  try {
    node = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("--set {}: cannot parse the value: {}", key, e.what()));
  }
  json value = node.IsScalar() ? yaml_scalar_to_json(node) : json(nullptr);
  if (assignment.size() == eq + 1) value = "";
  // Build {"a": {"b": value}} from "a.b", innermost first.
  json overlay = value;
  std::string rest = key;
  for (auto dot = rest.rfind('.'); ; dot = rest.rfind('.')) {
    const std::string part = dot == std::string::npos ? rest : rest.substr(dot + 1);
    if (part.empty()) throw UsageError(fmt::format("--set '{}': empty key component", assignment));
    overlay = json{{part, overlay}};
    if (dot == std::string::npos) break;
    rest.resize(dot);
  }
  merge(tree, overlay, "", "--set");
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
  c.loader.worker_mode = parse_enum<WorkerMode>(
      t, "loader", "worker_mode",
      {{"process", WorkerMode::process}, {"thread", WorkerMode::thread}});
  c.loader.prefetch_factor = get_int(t, "loader", "prefetch_factor", 1, 64);
  c.loader.persistent_workers = t["loader"]["persistent_workers"].get<bool>();
  c.loader.in_order = t["loader"]["in_order"].get<bool>();
  c.loader.pin_memory = parse_enum<PinMemory>(
      t, "loader", "pin_memory",
      {{"auto", PinMemory::auto_detect}, {"true", PinMemory::on}, {"false", PinMemory::off}});
  c.loader.shuffle = t["loader"]["shuffle"].get<bool>();
  c.loader.seed = static_cast<uint64_t>(get_int(t, "loader", "seed", 0, 1 << 30));
  c.loader.on_error = parse_enum<OnError>(
      t, "loader", "on_error", {{"skip", OnError::skip}, {"fail", OnError::fail}});

  c.image.size = get_int(t, "image", "size", 8, 4096);
  c.image.dtype = parse_enum<ImageDType>(
      t, "image", "dtype", {{"uint8", ImageDType::uint8}, {"float32", ImageDType::float32}});
  c.image.dct_scaling = t["image"]["dct_scaling"].get<bool>();

  c.video.frames = get_int(t, "video", "frames", 1, 1024);
  c.video.size = get_int(t, "video", "size", 8, 4096);
  c.video.sampling = parse_enum<VideoSampling>(
      t, "video", "sampling",
      {{"uniform", VideoSampling::uniform}, {"random_window", VideoSampling::random_window}});
  c.video.decoder_threads = get_int(t, "video", "decoder_threads", 1, 64);
  c.text.seq_len = get_int(t, "text", "seq_len", 1, 1 << 16);

  c.step.kind = parse_enum<StepKind>(t, "step", "kind",
                                     {{"none", StepKind::none},
                                      {"sleep", StepKind::sleep},
                                      {"spin", StepKind::spin},
                                      {"torch", StepKind::torch}});
  c.step.ms = t["step"]["ms"].get<double>();
  if (c.step.ms < 0) throw UsageError(fmt::format("step.ms must be >= 0, got {}", c.step.ms));
  if (!t["step"]["model"].is_null()) c.step.model = t["step"]["model"].get<std::string>();
  c.step.accum_steps = get_int(t, "step", "accum_steps", 1, 1 << 16);
  c.step.device = t["step"]["device"].get<std::string>();

  c.phases.warmup_steps = get_int(t, "phases", "warmup_steps", 0, 1 << 24);
  c.phases.steps = get_int(t, "phases", "steps", 1, 1 << 24);
  c.phases.warmup_s = t["phases"]["warmup_s"].get<double>();

  c.dist.world_size = resolve_env_int(tree["dist"]["world_size"], "WORLD_SIZE", 1);
  c.dist.rank = resolve_env_int(tree["dist"]["rank"], "RANK", 0);
  if (c.dist.world_size < 1 || c.dist.rank >= c.dist.world_size) {
    throw UsageError(fmt::format("dist.rank ({}) must be below dist.world_size ({})", c.dist.rank,
                                 c.dist.world_size));
  }
  c.dist.sync = t["dist"]["sync"].get<std::string>();
  if (c.dist.sync != "none") {
    throw UnavailableError(fmt::format(
        "dist.sync={} is not available yet: multi-rank synchronisation is planned, use none",
        c.dist.sync));
  }
  tree["dist"]["rank"] = c.dist.rank;
  tree["dist"]["world_size"] = c.dist.world_size;
  return c;
}

}  // namespace mmprof
