#pragma once
// The design of a one-factor-at-a-time experiment (`mmprof ab`): factors, arms, rounds, the
// randomized order of arms in each round, planned looks and declared guardrails. Pure: built
// from an ExperimentSpec (command line and/or experiment YAML file) before any trial runs.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mmprof {

// How a factor may change the batches: `preserving` factors must give identical batch digests,
// `lossy` ones are bounded by PSNR, `changing` ones legitimately change content (not checked).
enum class ContentKind { preserving, lossy, changing };
const char* to_string(ContentKind k) noexcept;
ContentKind content_kind(const std::string& key);

enum class CacheRegime { warm, cold };

struct Factor {
  std::string key;
  std::vector<std::string> values;  // values[0] is the base's
  ContentKind content = ContentKind::changing;
};

// What the user asked for, before validation.
struct ExperimentSpec {
  std::string config_file;              // base configuration (empty: built-in defaults)
  std::string data;                     // --data
  std::vector<std::string> sets;        // --set a.b=c for the base
  std::vector<std::string> factors;     // "KEY=V1,V2[,...]"
  std::vector<std::string> preserving;  // keys declared content-preserving (checked by digest)
  int rounds = 10;
  uint64_t seed = 1;
  std::string cache = "warm";
  double warmup_s = 1.0;
  // --steps: every trial's measured steps (= phases.steps, after `sets`); for a job, batches of
  // its DataLoader after warm-up.
  std::optional<int> steps;
  // --duration: a job's trials are stopped after this many seconds of measured steps instead.
  std::optional<double> duration_s;
  // A user's own job (`mmprof ab ... -- CMD`): every trial is a fresh launch of it. Its factors
  // are loader.* (the hook applies them to its DataLoader), env.NAME (its environment) or NAME,
  // substituted for `{NAME}` in the command (as hyperfine's parameters).
  std::vector<std::string> command;
};

// Reads an experiment YAML file (keys: config, data, set, factors {KEY: [values]}, preserving,
// rounds, seed, cache, warmup_s, steps, duration_s). Throws UsageError naming the file and key.
ExperimentSpec load_experiment_file(const std::string& path);

// The embedded default experiment: loader.num_workers 1 vs 2 and loader.pin_memory auto vs false,
// 6 rounds of short phases (batches of 4, two video frames, 15 steps).
ExperimentSpec default_experiment();

struct Arm {
  std::string id;    // "base", "A/A", "KEY=VALUE"
  std::string role;  // base | calibration | factor
  std::optional<size_t> factor;
  std::string value;
  ContentKind content = ContentKind::preserving;
  std::vector<std::string> overrides;  // the arm's --set list (base overrides first)
};

struct Guardrails {
  double max_latency_growth = 0.25;  // step/wait p95 and p99: arm <= (1 + g) base + slack
  double latency_slack_ms = 0.5;
  double max_pss_growth = 0.5;   // peak total PSS per samples/s: arm <= (1 + g) base
  double memory_budget_mib = 0;  // the arm's highest peak total PSS must stay below (0: none)
};

// The default memory budget of an experiment's arms: this share of the host's RAM.
constexpr double kMemoryBudgetShare = 0.8;

struct ExperimentDesign {
  ExperimentSpec spec;
  std::vector<Factor> factors;
  std::vector<Arm> arms;  // base, A/A, then each factor's non-base values
  int min_rounds = 6;
  CacheRegime cache = CacheRegime::warm;
  double alpha = 0.05, power = 0.8;
  double tau_floor = 0.02;  // log-ratio units (about 2 %)
  int bootstrap_resamples = 10'000;
  std::vector<int> looks;  // rounds after which the data are analysed (the last is `rounds`)
  Guardrails guardrails;
  double psnr_min_db = 30;
  int psnr_batches = 4;
  int steady_blocks = 5;
};

// How a factor reaches a trial: --set (mmprof's configuration, or a job's DataLoader), a job's
// environment variable, or a {placeholder} of the job's command.
enum class FactorRoute { config, env, placeholder };
FactorRoute factor_route(const std::string& key, const std::vector<std::string>& command);

// A job's command with each {NAME} replaced by the arm's value of factor NAME (`values`:
// "NAME=VALUE" overrides; others are ignored).
std::vector<std::string> substitute_command(const std::vector<std::string>& command,
                                            const std::vector<std::string>& overrides);

// Validates the spec (factor syntax, at least 6 rounds, cache regime) and builds the arms and
// looks. `memory_total_mib` (the host's MemTotal) sets the PSS budget: kMemoryBudgetShare of it.
// Throws UsageError.
ExperimentDesign make_design(const ExperimentSpec& spec, double memory_total_mib);

// The arm indices of round r in run order: a fresh permutation from Rng::for_item(seed, 16, r).
std::vector<size_t> round_order(const ExperimentDesign& d, int round);

// The design section of experiment.json (docs/experiment.md).
nlohmann::json design_json(const ExperimentDesign& d, const nlohmann::json& base_config,
                           const nlohmann::json& metric);

}  // namespace mmprof
