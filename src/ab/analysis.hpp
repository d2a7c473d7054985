#pragma once
// The statistics and verdicts of `mmprof ab`: pure functions of the design and the trial
// records. Every arm is compared with the base of the same round (paired log ratios
// d = ln(arm / base)); the A/A arm calibrates the indifference band tau.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ab/design.hpp"
#include "ab/trial_record.hpp"
#include "stats/inference.hpp"

namespace mmprof {

struct GuardrailCheck {
  std::string name;
  double base = 0, arm = 0, limit = 0;
  double p = NAN;  // Wilcoxon p that the arm is worse round by round (paired checks only)
  bool ok = true;
};

struct CorrectnessCheck {
  std::string kind = "none";  // digest | psnr | none
  std::optional<bool> ok;     // nullopt: nothing to compare yet
  std::string detail;
};

struct Drift {
  stats::Trend base, d;
  double base_change = 0, d_change = 0;  // OLS slope x (n - 1), log units
  bool drift = false;
};

struct ArmResult {
  size_t arm = 0;
  size_t n = 0;  // paired rounds
  double base_median = NAN, arm_median = NAN;
  stats::MeanInterval t;  // of d, at the look's nominal alpha
  stats::Interval bootstrap{NAN, NAN};
  stats::WilcoxonResult wilcoxon;
  double mde = NAN;  // log units
  Drift drift;
  int steady = 0, nonsteady = 0;            // this arm's trials by their steady-state check
  int base_steady = 0, base_nonsteady = 0;  // the base's
  std::vector<GuardrailCheck> guardrails;
  // The highest host-wide memory peak of the base's and the arm's trials: context only.
  double base_host_peak_mib = NAN, host_peak_mib = NAN;
  // The arm's content as this experiment found it: its design's, unless the job showed the
  // factor changes content there (loader.num_workers on an IterableDataset).
  ContentKind content = ContentKind::preserving;
  CorrectnessCheck correctness;
  std::string verdict = "INCONCLUSIVE", reason;
};

struct Calibration {
  size_t n = 0;
  double half_width = NAN;  // A/A 95 % t-interval half-width, log units
  double tau = 0;           // max(half_width, floor)
  double mde = NAN;         // the machine's MDE at this n, from the A/A spread, log units
};

struct Analysis {
  Calibration calibration;
  double alpha_nominal = 0.05;
  std::vector<ArmResult> arms;  // every arm but the base, in design order
  bool all_factor_arms_decided = false;
};

// `psnr` holds the PSNR (dB) measured for each lossy arm. `alpha_nominal` is the alpha this look
// tests at (the increment of the spending function).
Analysis analyze(const ExperimentDesign& d, const std::vector<TrialRecord>& trials,
                 const std::map<size_t, double>& psnr, double alpha_nominal);

// Whether the trials of a --cache cold experiment measured a cold cache: the data is evicted
// before each loader phase, but warm-up (and the steady-state check) may read it back before the
// measured window begins. Counts the complete trials whose window began with at least
// kWarmAtWindow of the dataset resident; null for a warm experiment or when no complete trial
// measured its residency (a remote dataset).
constexpr double kWarmAtWindow = 0.5;
nlohmann::json cache_at_window(const ExperimentDesign& d, const std::vector<TrialRecord>& trials);

// The alpha increment that the look after `round` rounds spends (Lan-DeMets O'Brien-Fleming).
double look_alpha(const ExperimentDesign& d, int round);

nlohmann::json to_json(const Calibration& c);
nlohmann::json to_json(const ArmResult& r, const ExperimentDesign& d);

// 100 (e^x - 1): a log ratio as a percentage change.
double log_to_pct(double x);

}  // namespace mmprof
