#include "ab/design.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "config/yaml_file.hpp"
#include "measure/steady_state.hpp"
#include "mmprof/error.hpp"
#include "rundir/json_values.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

// Keys that only change how batches are produced, never what they hold (DESIGN.md: a seed fixes
// sample order and augmentation whatever the workers; image.dtype converts the same pixels;
// image.crop_decode decodes the same pixels of the crop, decode_test.cpp; image.simd resizes to
// the same bytes, transform_test.cpp).
const std::set<std::string> kPreservingKeys = {
    "loader.num_workers",
    "loader.prefetch_factor",
    "loader.pin_memory",
    "loader.worker_mode",
    "loader.persistent_workers",
    "loader.in_order",
    "data.layout",
    "video.decoder_threads",
    "metrics.interval_ms",
    "image.dtype",
    "loader.buffer_reuse",
    "loader.huge_pages",
    "loader.pin_workers",
    "video.reuse_decoder",
    "video.skip_nonref",
    "image.crop_decode",
    "image.simd",
};
// Keys that change decoded pixels within a bound (DCT-domain downscaling, another resize filter,
// another decoder: the GPU's, whose colour conversion and scaling are not the CPU's).
const std::set<std::string> kLossyKeys = {
    "image.dct_scaling",  "image.dct_scales",    "image.resizer",      "decode.device",
    "decode.gpu_backend", "image.decode_device", "video.decode_device"};

Factor parse_factor(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UsageError(
        fmt::format("--factor '{}' is not KEY=V1,V2[,...] (e.g. loader.num_workers=2,4)", text));
  }
  Factor f;
  f.key = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  for (size_t start = 0;;) {
    const auto comma = rest.find(',', start);
    f.values.push_back(rest.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (f.values.size() < 2 || std::any_of(f.values.begin(), f.values.end(),
                                         [](const std::string& v) { return v.empty(); })) {
    throw UsageError(fmt::format(
        "--factor '{}' needs at least two non-empty values: the base's first, then the arms'",
        text));
  }
  return f;
}

std::string scalar_text(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) throw UsageError(fmt::format("{} must be a scalar", where));
  return n.as<std::string>();
}

std::vector<std::string> string_list(const YAML::Node& n, const std::string& where) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n.IsSequence()) throw UsageError(fmt::format("{} must be a list", where));
  for (const auto& item : n)
    out.push_back(scalar_text(item, where));
  return out;
}

template <typename T>
T typed(const YAML::Node& n, const std::string& where) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw UsageError(fmt::format("{} has a value of the wrong type", where));
  }
}

std::vector<int> planned_looks(int rounds, int min_rounds) {
  const int interim = std::max(min_rounds, (rounds + 1) / 2);
  if (interim < rounds) return {interim, rounds};
  return {rounds};
}

}  // namespace

const char* to_string(ContentKind k) noexcept {
  switch (k) {
    case ContentKind::preserving:
      return "preserving";
    case ContentKind::lossy:
      return "lossy";
    case ContentKind::changing:
      return "changing";
  }
  return "changing";
}

ContentKind content_kind(const std::string& key) {
  if (kPreservingKeys.count(key) != 0) return ContentKind::preserving;
  if (kLossyKeys.count(key) != 0) return ContentKind::lossy;
  return ContentKind::changing;
}

ExperimentSpec load_experiment_file(const std::string& path) {
  const YAML::Node root = config::load_yaml_file(path, "experiment file");
  if (!root.IsMap()) throw UsageError(fmt::format("experiment file {} is not a mapping", path));
  static const std::set<std::string> known = {"config",     "data",   "set",       "factors",
                                              "preserving", "rounds", "seed",      "cache",
                                              "warmup_s",   "steps",  "duration_s"};
  ExperimentSpec s;
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    const std::string where = fmt::format("{}: key '{}'", path, key);
    if (known.count(key) == 0) throw UsageError(fmt::format("{} is not a known key", where));
    const YAML::Node& v = kv.second;
    if (key == "config") s.config_file = scalar_text(v, where);
    if (key == "data") s.data = scalar_text(v, where);
    if (key == "set") s.sets = string_list(v, where);
    if (key == "preserving") s.preserving = string_list(v, where);
    if (key == "rounds") s.rounds = typed<int>(v, where);
    if (key == "seed") s.seed = typed<uint64_t>(v, where);
    if (key == "cache") s.cache = scalar_text(v, where);
    if (key == "warmup_s") s.warmup_s = typed<double>(v, where);
    if (key == "steps") s.steps = typed<int>(v, where);
    if (key == "duration_s") s.duration_s = typed<double>(v, where);
    if (key == "factors") {
      if (!v.IsMap()) throw UsageError(fmt::format("{} must map KEY: [values]", where));
      for (const auto& f : v) {
        const auto name = f.first.as<std::string>();
        const auto values = string_list(f.second, fmt::format("{}.{}", where, name));
        std::string joined;
        for (const auto& value : values) {
          if (!joined.empty()) joined += ',';
          joined += value;
        }
        s.factors.push_back(std::string(name).append("=").append(joined));
      }
    }
  }
  return s;
}

ExperimentSpec default_experiment() {
  ExperimentSpec s;
  s.factors = {"loader.num_workers=1,2", "loader.pin_memory=auto,false"};
  // Small batches, two video frames and short phases keep a trial to a few seconds on two cores.
  s.sets = {"loader.batch_size=4", "video.frames=2", "phases.warmup_steps=2", "phases.steps=15"};
  s.rounds = 6;
  s.warmup_s = 0.5;
  return s;
}

FactorRoute factor_route(const std::string& key, const std::vector<std::string>& command) {
  if (command.empty() || key.find('.') != std::string::npos) {
    return key.rfind("env.", 0) == 0 && !command.empty() ? FactorRoute::env : FactorRoute::config;
  }
  const std::string placeholder = "{" + key + "}";
  for (const auto& word : command)
    if (word.find(placeholder) != std::string::npos) return FactorRoute::placeholder;
  throw UsageError(fmt::format(
      "--factor {}: for a job a factor is loader.* (its DataLoader), env.NAME (its environment) or "
      "NAME with {} in the command; the command has no {}",
      key, placeholder, placeholder));
}

std::vector<std::string> substitute_command(const std::vector<std::string>& command,
                                            const std::vector<std::string>& overrides) {
  std::vector<std::string> out = command;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos) continue;
    const std::string placeholder = fmt::format("{{{}}}", o.substr(0, eq));
    const std::string value = o.substr(eq + 1);
    for (auto& word : out) {
      for (size_t at = word.find(placeholder); at != std::string::npos;
           at = word.find(placeholder, at + value.size()))
        word.replace(at, placeholder.size(), value);
    }
  }
  return out;
}

namespace {

// A trial's warm-up or measured seconds: at most a day (phases.warmup_s's range).
constexpr double kMaxTrialSeconds = 86400;

// --steps and --duration: each a positive bound, one of them, and --duration for a job only.
void check_trial_length(const ExperimentSpec& spec) {
  if (spec.steps && *spec.steps < 1)
    throw UsageError(fmt::format("--steps must be at least 1, got {}", *spec.steps));
  if (spec.duration_s && !(*spec.duration_s > 0 && *spec.duration_s <= kMaxTrialSeconds)) {
    throw UsageError(fmt::format("--duration must be in (0, {}] seconds, got {}", kMaxTrialSeconds,
                                 *spec.duration_s));
  }
  if (spec.steps && spec.duration_s)
    throw UsageError("--steps and --duration both bound every trial: give one");
  if (spec.duration_s && spec.command.empty()) {
    throw UsageError(
        "--duration bounds a job's trials (mmprof ab --duration S ... -- CMD); mmprof's own "
        "trials are as long as their steps: --steps N");
  }
}

}  // namespace

ExperimentDesign make_design(const ExperimentSpec& spec, double memory_total_mib) {
  ExperimentDesign d;
  d.spec = spec;
  if (spec.rounds < d.min_rounds) {
    throw UsageError(fmt::format("--rounds {} is too few: the protocol needs at least {}",
                                 spec.rounds, d.min_rounds));
  }
  if (spec.cache != "warm" && spec.cache != "cold")
    throw UsageError(fmt::format("--cache must be warm or cold, got '{}'", spec.cache));
  d.cache = spec.cache == "cold" ? CacheRegime::cold : CacheRegime::warm;
  if (!(spec.warmup_s >= 0 && spec.warmup_s <= kMaxTrialSeconds)) {
    throw UsageError(
        fmt::format("--warmup-s must be in [0, {}], got {}", kMaxTrialSeconds, spec.warmup_s));
  }
  check_trial_length(spec);
  // --steps is phases.steps of every arm, after the base's own --set.
  if (spec.steps) d.spec.sets.push_back(fmt::format("phases.steps={}", *spec.steps));
  if (spec.factors.empty()) throw UsageError("no --factor given (KEY=V1,V2[,...])");
  std::vector<std::string> base_overrides = d.spec.sets;
  for (const auto& text : spec.factors) {
    Factor f = parse_factor(text);
    for (const auto& seen : d.factors)
      if (seen.key == f.key) throw UsageError(fmt::format("factor {} is given twice", f.key));
    factor_route(f.key, spec.command);  // refuses a job's factor it has no way to apply
    const bool declared = std::count(spec.preserving.begin(), spec.preserving.end(), f.key) > 0;
    f.content = declared ? ContentKind::preserving : content_kind(f.key);
    base_overrides.push_back(f.key + "=" + f.values[0]);
    d.factors.push_back(std::move(f));
  }
  d.arms.push_back({"base", "base", std::nullopt, "", ContentKind::preserving, base_overrides});
  d.arms.push_back(
      {"A/A", "calibration", std::nullopt, "", ContentKind::preserving, base_overrides});
  for (size_t i = 0; i < d.factors.size(); ++i) {
    const Factor& f = d.factors[i];
    for (size_t v = 1; v < f.values.size(); ++v) {
      // The layouts read the same samples in the same batches, except a stream, whose shards
      // and shuffle buffer make its own order (data/sampler.hpp): another content.
      const bool one_streams =
          f.key == "data.layout" && (f.values[0] == "tar_stream") != (f.values[v] == "tar_stream");
      Arm arm{f.key + "=" + f.values[v],
              "factor",
              i,
              f.values[v],
              one_streams ? ContentKind::changing : f.content,
              base_overrides};
      arm.overrides.push_back(arm.id);
      d.arms.push_back(std::move(arm));
    }
  }
  d.looks = planned_looks(spec.rounds, d.min_rounds);
  d.guardrails.memory_budget_mib = kMemoryBudgetShare * memory_total_mib;
  return d;
}

std::vector<size_t> round_order(const ExperimentDesign& d, int round) {
  std::vector<size_t> order(d.arms.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng = Rng::for_item(d.spec.seed, kStreamAbOrder, static_cast<uint64_t>(round));
  // Fisher-Yates.
  for (size_t i = order.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

nlohmann::json design_json(const ExperimentDesign& d, const nlohmann::json& base_config,
                           const nlohmann::json& metric) {
  using nlohmann::json;
  json factors = json::array(), arms = json::array();
  for (const auto& f : d.factors) {
    factors.push_back({{"key", f.key},
                       {"values", f.values},
                       {"base", f.values[0]},
                       {"content", to_string(f.content)}});
  }
  for (const auto& a : d.arms) {
    arms.push_back({{"id", a.id},
                    {"factor", a.factor ? json(d.factors[*a.factor].key) : json()},
                    {"value", a.factor ? json(a.value) : json()},
                    {"role", a.role},
                    {"content", to_string(a.content)},
                    {"overrides", a.overrides}});
  }
  const Guardrails& g = d.guardrails;
  return {{"config_file", d.spec.config_file},
          {"data", d.spec.data},
          {"command", d.spec.command.empty() ? json() : json(d.spec.command)},
          {"base_overrides", d.arms[0].overrides},
          {"base_config", base_config},
          {"factors", factors},
          {"arms", arms},
          {"rounds", d.spec.rounds},
          {"min_rounds", d.min_rounds},
          {"seed", d.spec.seed},
          {"cache", d.spec.cache},
          {"warmup_s", d.spec.warmup_s},
          {"steps", rundir::nullable(d.spec.steps)},
          {"duration_s", rundir::nullable(d.spec.duration_s)},
          {"warmup_batches_rule", "max(phases.warmup_steps, 2 x num_workers x prefetch_factor)"},
          {"metric", metric},
          {"alpha", d.alpha},
          {"power", d.power},
          {"looks", d.looks},
          {"alpha_spending", "lan-demets-obrien-fleming"},
          {"tau_floor", d.tau_floor},
          {"bootstrap_resamples", d.bootstrap_resamples},
          {"steady_state",
           {{"blocks", d.steady_blocks},
            {"block_steps_rule", "max(4, num_workers x prefetch_factor)"},
            {"cv_max", SteadyCriteria{}.cv_max},
            {"trend", "Spearman over blocks, exact p < 0.05"}}},
          {"guardrails",
           {{"max_latency_growth", g.max_latency_growth},
            {"latency_slack_ms", g.latency_slack_ms},
            {"max_pss_growth", g.max_pss_growth},
            {"pss_growth_per", "samples/s of the metric (PSS per unit of throughput)"},
            {"memory_budget_mib", g.memory_budget_mib},
            {"memory_budget_rule",
             fmt::format("{:.0f} % of the host's MemTotal; the arm's highest peak total PSS",
                         100 * kMemoryBudgetShare)},
            {"context", {"host_peak_mib"}},
            {"latency", {"step.p95", "step.p99", "wait.p95", "wait.p99"}},
            {"errors", "arm <= base"},
            {"correctness", "digests (preserving) or PSNR (lossy)"}}},
          {"psnr_min_db", d.psnr_min_db},
          {"psnr_batches", d.psnr_batches}};
}

}  // namespace mmprof
