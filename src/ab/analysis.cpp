#include "ab/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

using TrialIndex = std::map<std::pair<int, size_t>, const TrialRecord*>;

// One arm's trials paired with the base's trial of the same round (both complete).
struct Pairs {
  std::vector<double> d, base_log;
  std::vector<const TrialRecord*> base, arm;
};

Pairs pair_with_base(const TrialIndex& idx, size_t arm, int rounds) {
  Pairs p;
  for (int r = 0; r < rounds; ++r) {
    const auto b = idx.find({r, 0}), a = idx.find({r, arm});
    if (b == idx.end() || a == idx.end() || !b->second->complete() || !a->second->complete())
      continue;
    p.base.push_back(b->second);
    p.arm.push_back(a->second);
    p.base_log.push_back(std::log(*b->second->metric));
    p.d.push_back(std::log(*a->second->metric / *b->second->metric));
  }
  return p;
}

double median_of(const std::vector<const TrialRecord*>& trials,
                 double (*field)(const TrialRecord&)) {
  std::vector<double> v;
  for (const auto* t : trials)
    if (std::isfinite(field(*t))) v.push_back(field(*t));
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

// Ordinary least squares slope of y over 0..n-1, times (n - 1): the change over the experiment.
double ols_change(const std::vector<double>& y) {
  const auto n = static_cast<double>(y.size());
  if (y.size() < 2) return 0;
  const double mx = (n - 1) / 2, my = mmprof::mean(y);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    sxy += (static_cast<double>(i) - mx) * (y[i] - my);
    sxx += (static_cast<double>(i) - mx) * (static_cast<double>(i) - mx);
  }
  return sxy / sxx * (n - 1);
}

// Drift matters when a trend is significant (Spearman, p < 0.05) and material: the fitted change
// over the experiment exceeds the indifference band.
Drift drift_of(const Pairs& p, double tau) {
  Drift dr;
  dr.base = stats::spearman_trend(p.base_log);
  dr.d = stats::spearman_trend(p.d);
  dr.base_change = ols_change(p.base_log);
  dr.d_change = ols_change(p.d);
  const auto material = [&](const stats::Trend& t, double change) {
    return t.p < 0.05 && std::fabs(change) > tau;
  };
  dr.drift = material(dr.base, dr.base_change) || material(dr.d, dr.d_change);
  return dr;
}

double step_p95(const TrialRecord& t) {
  return t.step_p95;
}
double step_p99(const TrialRecord& t) {
  return t.step_p99;
}
double wait_p95(const TrialRecord& t) {
  return t.wait_p95;
}
double wait_p99(const TrialRecord& t) {
  return t.wait_p99;
}
// PSS per unit of throughput (MiB per samples/s): a change that adds workers adds their memory,
// and that is a cost only when the throughput does not grow with it.
double pss_per_rate(const TrialRecord& t) {
  return t.metric && *t.metric > 0 ? t.pss_peak_mib / *t.metric : NAN;
}
double metric_of(const TrialRecord& t) {
  return *t.metric;
}

// Wilcoxon signed-rank p of the per-round differences arm - base of `field`, and whether the
// arm is the worse (larger) one.
std::pair<double, bool> worse_by_round(const Pairs& p, double (*field)(const TrialRecord&)) {
  std::vector<double> diff;
  for (size_t i = 0; i < p.arm.size(); ++i) {
    const double x = field(*p.arm[i]) - field(*p.base[i]);
    if (std::isfinite(x)) diff.push_back(x);
  }
  const stats::WilcoxonResult w = stats::wilcoxon_signed_rank(diff);
  return {w.p, w.n > 0 && w.w_plus > static_cast<double>(w.n * (w.n + 1)) / 4};
}

// The highest finite `field` over `trials` (NaN when none).
double highest(const std::vector<const TrialRecord*>& trials, double TrialRecord::*field) {
  double out = NAN;
  for (const auto* t : trials)
    if (std::isfinite(t->*field)) out = std::fmax(out, t->*field);
  return out;
}

// Latency and PSS-per-throughput limits are relative to the base configuration as measured twice
// in every round (base and A/A): the worse of the two medians, so that the base's own run-to-run
// spread never counts as a violation. On a noisy machine a tail percentile of a short phase moves
// a lot, so exceeding the limit counts only when the arm is also worse round by round (Wilcoxon,
// p < alpha). The PSS budget (the arm's highest peak) and the error count are hard limits. The
// host's peak memory is not a guardrail: other processes move it (ArmResult::host_peak_mib).
std::vector<GuardrailCheck> check_guardrails(const Pairs& p, const Pairs& aa, const Guardrails& g,
                                             double alpha) {
  const auto reference = [&](double (*field)(const TrialRecord&)) {
    return std::fmax(median_of(p.base, field), median_of(aa.arm, field));
  };
  std::vector<GuardrailCheck> out;
  const auto add = [&](const char* name, double base, double arm, double limit) {
    if (std::isfinite(base) && std::isfinite(arm))
      out.push_back({name, base, arm, limit, NAN, arm <= limit});
  };
  const auto add_paired = [&](const char* name, double (*field)(const TrialRecord&), double growth,
                              double slack) {
    const double base = reference(field), arm = median_of(p.arm, field);
    if (!std::isfinite(base) || !std::isfinite(arm)) return;
    const double limit = (1 + growth) * base + slack;
    const auto [p_worse, worse] = worse_by_round(p, field);
    out.push_back({name, base, arm, limit, p_worse, arm <= limit || !(worse && p_worse < alpha)});
  };
  const std::pair<const char*, double (*)(const TrialRecord&)> latencies[] = {
      {"step_p95_ms", step_p95},
      {"step_p99_ms", step_p99},
      {"wait_p95_ms", wait_p95},
      {"wait_p99_ms", wait_p99}};
  for (const auto& [name, field] : latencies)
    add_paired(name, field, g.max_latency_growth, g.latency_slack_ms);
  add_paired("pss_mb_per_samples_per_s", pss_per_rate, g.max_pss_growth, 0);
  if (g.memory_budget_mib > 0) {
    add("pss_peak_mib", highest(p.base, &TrialRecord::pss_peak_mib),
        highest(p.arm, &TrialRecord::pss_peak_mib), g.memory_budget_mib);
  }
  int64_t base_errors = 0, arm_errors = 0;
  for (size_t i = 0; i < p.arm.size(); ++i) {
    base_errors += p.base[i]->errors;
    arm_errors += p.arm[i]->errors;
  }
  if (!p.arm.empty()) {
    add("errors", static_cast<double>(base_errors), static_cast<double>(arm_errors),
        static_cast<double>(base_errors));
  }
  return out;
}

// make_design puts the base first and its A/A copy second.
constexpr size_t kCalibrationArm = 1;

// The batches `arm` delivered against the base's, round by round.
DigestComparison digests_against_base(const ExperimentDesign& d, size_t arm,
                                      const TrialIndex& idx) {
  DigestComparison total;
  for (int r = 0; r < d.spec.rounds; ++r) {
    const auto b = idx.find({r, 0}), t = idx.find({r, arm});
    if (b == idx.end() || t == idx.end()) continue;
    const DigestComparison one = compare_digests(b->second->digests, t->second->digests);
    if (total.mismatched == 0 && one.mismatched > 0)
      total.first_mismatch = fmt::format("round {} {}", r, one.first_mismatch);
    total.compared += one.compared;
    total.mismatched += one.mismatched;
  }
  return total;
}

// Why a factor declared content-preserving changes content on the job the trials ran: each
// DataLoader worker iterates its own part of an IterableDataset (WebDataset's split_by_worker,
// Streaming's and LitData's partitions), so another number of workers makes other batches. ""
// when the base's trials iterated no IterableDataset or the factor is another.
std::string iterable_reorders(const ExperimentDesign& d, size_t arm, const TrialIndex& idx) {
  const Arm& a = d.arms[arm];
  if (!a.factor || d.factors[*a.factor].key != "loader.num_workers") return "";
  for (const auto& [key, t] : idx) {
    if (key.second == 0 && !t->iterable_dataset.empty()) {
      return fmt::format(
          "the job's DataLoader iterates an IterableDataset ({}): each worker reads its own part "
          "of it, so loader.num_workers changes which samples make each batch and their order; "
          "not compared (judge the training's quality on the new order)",
          t->iterable_dataset);
    }
  }
  return "";
}

CorrectnessCheck check_content(const ExperimentDesign& d, size_t arm, const TrialIndex& idx,
                               const std::map<size_t, double>& psnr, ContentKind& content) {
  CorrectnessCheck c;
  const Arm& a = d.arms[arm];
  content = a.content;
  if (a.content == ContentKind::preserving) {
    if (std::string why = iterable_reorders(d, arm, idx); !why.empty()) {
      content = ContentKind::changing;
      c.detail = std::move(why);
      return c;
    }
  }
  if (a.content == ContentKind::lossy) {
    c.kind = "psnr";
    const auto it = psnr.find(arm);
    if (it == psnr.end()) return c;
    c.ok = it->second >= d.psnr_min_db;
    c.detail = fmt::format("PSNR {:.1f} dB over the first {} batches (bound {:.0f} dB)", it->second,
                           d.psnr_batches, d.psnr_min_db);
    return c;
  }
  if (a.content == ContentKind::changing) {
    c.detail = "the factor changes content by design; not compared";
    return c;
  }
  c.kind = "digest";
  // The A/A copy is the base run again: if its batches already differ, the run is not
  // reproducible (a job's unseeded shuffle or augmentation), and no arm can be held to the base's.
  const DigestComparison repeat = digests_against_base(d, kCalibrationArm, idx);
  if (repeat.mismatched > 0) {
    c.detail = fmt::format(
        "not checked: the base's own repeat (A/A) delivered other batches ({} of {} differ, "
        "first: {}), so the batches are not reproducible (an unseeded shuffle or augmentation); "
        "seed them to check content",
        repeat.mismatched, repeat.compared, repeat.first_mismatch);
    return c;
  }
  const DigestComparison total = digests_against_base(d, arm, idx);
  if (total.compared == 0) {
    c.detail =
        "not checked: no batch of the arm was digested with the base's (a job's batches are "
        "digested in the warm-up steps only: phases.warmup_steps 0 leaves none)";
    return c;
  }
  c.ok = total.mismatched == 0;
  c.detail = c.ok.value() ? fmt::format("{} batches identical to the base's", total.compared)
                          : fmt::format("{} of {} batches differ from the base's (first: {})",
                                        total.mismatched, total.compared, total.first_mismatch);
  return c;
}

std::string pct(double x) {
  return fmt::format("{:+.1f} %", log_to_pct(x));
}

std::string ci_text(const ArmResult& r) {
  return fmt::format("{} [{}, {}]", pct(r.t.mean), pct(r.t.lo), pct(r.t.hi));
}

// What a decided verdict rests on, so that the guards know what may withhold it.
enum class Basis {
  undecided,         // INCONCLUSIVE already
  hard_limit,        // a REJECT by the budget, the error count: never withheld
  paired_guardrail,  // a REJECT by latency or PSS per throughput, measured round by round
  throughput,        // ADOPT, REJECT or EQUIVALENT by the throughput statistics
};

// The verdict before the guards: ADOPT / REJECT / EQUIVALENT / INCONCLUSIVE with its reason, and
// what it rests on.
Basis statistical_verdict(ArmResult& r, const ExperimentDesign& d, double tau) {
  // The A/A arm is the base itself: its guardrail figures describe noise, not a change.
  const bool guarded = d.arms[r.arm].role == "factor";
  // A violated hard limit (no Wilcoxon p) names the REJECT before any paired check does.
  const auto failed = [&](bool hard_only) {
    return guarded ? std::find_if(r.guardrails.begin(), r.guardrails.end(),
                                  [&](const auto& g) {
                                    return !g.ok && (!hard_only || !std::isfinite(g.p));
                                  })
                   : r.guardrails.end();
  };
  auto failed_guardrail = failed(true);
  if (failed_guardrail == r.guardrails.end()) failed_guardrail = failed(false);
  const std::string band = fmt::format("{:.1f} %", log_to_pct(tau));
  if (r.t.hi < -tau) {
    r.verdict = "REJECT";
    r.reason = fmt::format("throughput changes by {}, entirely below -{}", ci_text(r), band);
  } else if (failed_guardrail != r.guardrails.end()) {
    r.verdict = "REJECT";
    r.reason =
        fmt::format("guardrail {} is violated: {:.2f} against a limit of {:.2f} (base {:.2f})",
                    failed_guardrail->name, failed_guardrail->arm, failed_guardrail->limit,
                    failed_guardrail->base);
    // A hard limit holds whatever the trials' state; a paired check (it has a Wilcoxon p) rests
    // on figures measured in the same trials as the throughput.
    return std::isfinite(failed_guardrail->p) ? Basis::paired_guardrail : Basis::hard_limit;
  } else if (r.t.lo > tau) {
    r.verdict = "ADOPT";
    r.reason = fmt::format("throughput improves by {}, entirely above +{}, every guardrail held",
                           ci_text(r), band);
  } else if (r.t.lo >= -tau && r.t.hi <= tau) {
    r.verdict = "EQUIVALENT";
    r.reason = fmt::format("throughput changes by {}, inside the ±{} band", ci_text(r), band);
    return Basis::throughput;
  } else {
    r.verdict = "INCONCLUSIVE";
    r.reason = fmt::format("throughput changes by {}, which straddles the ±{} band (MDE {:.1f} %)",
                           ci_text(r), band, log_to_pct(r.mde));
    return Basis::undecided;
  }
  // ADOPT or a statistical REJECT: the rank test must agree.
  if (r.wilcoxon.p >= d.alpha) {
    r.reason =
        fmt::format("the t-interval says {} ({}) but Wilcoxon signed-rank does not (p {:.3f})",
                    r.verdict, ci_text(r), r.wilcoxon.p);
    r.verdict = "INCONCLUSIVE";
    return Basis::undecided;
  }
  return Basis::throughput;
}

bool mostly_nonsteady(int steady, int nonsteady) {
  return 2 * nonsteady > steady + nonsteady;
}

// Why a decided verdict is withheld; empty when it stands. Drift (throughput verdicts): the
// machine changed over the rounds. Non-steady trials (throughput and paired guardrail verdicts):
// when most trials of the arm or of the base never settled (steady.json), their throughput and
// tails measure warm-up, not the configuration.
std::string untrusted_because(const ArmResult& r, Basis basis) {
  if (basis == Basis::undecided || basis == Basis::hard_limit) return "";
  if (basis == Basis::throughput && r.drift.drift) {
    return fmt::format("throughput drifts over rounds (base change {}, effect change {})",
                       pct(r.drift.base_change), pct(r.drift.d_change));
  }
  const bool arm = mostly_nonsteady(r.steady, r.nonsteady);
  const bool base = mostly_nonsteady(r.base_steady, r.base_nonsteady);
  if (arm && base) {
    return fmt::format(
        "{} of {} trials of this arm and {} of {} of the base never reached steady "
        "state",
        r.nonsteady, r.steady + r.nonsteady, r.base_nonsteady, r.base_steady + r.base_nonsteady);
  }
  if (arm) {
    return fmt::format("{} of {} trials of this arm never reached steady state", r.nonsteady,
                       r.steady + r.nonsteady);
  }
  if (base) {
    return fmt::format("{} of {} trials of the base never reached steady state", r.base_nonsteady,
                       r.base_steady + r.base_nonsteady);
  }
  return "";
}

ArmResult analyze_arm(const ExperimentDesign& d, size_t arm, const TrialIndex& idx, const Pairs& aa,
                      const std::vector<TrialRecord>& trials, const std::map<size_t, double>& psnr,
                      double alpha, double tau) {
  ArmResult r;
  r.arm = arm;
  const Pairs p = pair_with_base(idx, arm, d.spec.rounds);
  r.n = p.d.size();
  r.base_median = median_of(p.base, metric_of);
  r.arm_median = median_of(p.arm, metric_of);
  r.t = stats::t_interval(p.d, alpha);
  r.bootstrap = stats::bootstrap_mean_ci(p.d, alpha, d.bootstrap_resamples,
                                         splitmix64(d.spec.seed ^ (0x626f6f74ULL + arm)));
  r.wilcoxon = stats::wilcoxon_signed_rank(p.d);
  r.mde = stats::min_detectable_effect(r.t.sd, r.n, d.alpha, d.power);
  r.drift = drift_of(p, tau);
  r.guardrails = check_guardrails(p, aa, d.guardrails, d.alpha);
  r.base_host_peak_mib = highest(p.base, &TrialRecord::host_peak_mib);
  r.host_peak_mib = highest(p.arm, &TrialRecord::host_peak_mib);
  r.correctness = check_content(d, arm, idx, psnr, r.content);
  for (const auto& t : trials) {
    if ((t.arm != arm && t.arm != 0) || !t.steady) continue;
    if (t.arm == arm) (*t.steady ? r.steady : r.nonsteady)++;
    if (t.arm == 0) (*t.steady ? r.base_steady : r.base_nonsteady)++;
  }
  const auto failed = std::find_if(trials.begin(), trials.end(), [&](const TrialRecord& t) {
    return t.arm == arm && t.status == "failed";
  });
  const auto invalid = std::find_if(trials.begin(), trials.end(), [&](const TrialRecord& t) {
    return t.arm == arm && !t.invalid.empty();
  });
  if (invalid != trials.end()) {
    r.verdict = "INVALID";
    r.reason = fmt::format("trial {}: {}", invalid->run_dir, invalid->invalid);
  } else if (failed != trials.end()) {
    r.verdict = "INVALID";
    r.reason = fmt::format("trial {} exited with status {}{}; see {}.log", failed->run_dir,
                           failed->exit_code, failure_text(*failed), failed->run_dir);
  } else if (r.correctness.ok == false) {
    r.verdict = "INVALID";
    r.reason = fmt::format("content check failed for a {} factor: {}", to_string(r.content),
                           r.correctness.detail);
  } else if (r.n < static_cast<size_t>(d.min_rounds)) {
    r.reason = fmt::format("only {} paired rounds so far; the protocol needs at least {}", r.n,
                           d.min_rounds);
  } else {
    const Basis basis = statistical_verdict(r, d, tau);
    if (const std::string why = untrusted_because(r, basis); !why.empty()) {
      r.reason = fmt::format("would be {}, but {}", r.verdict, why);
      r.verdict = "INCONCLUSIVE";
    }
  }
  return r;
}

}  // namespace

nlohmann::json cache_at_window(const ExperimentDesign& d, const std::vector<TrialRecord>& trials) {
  if (d.cache != CacheRegime::cold) return nullptr;
  std::vector<double> resident;
  for (const TrialRecord& t : trials) {
    if (t.complete() && std::isfinite(t.resident_at_window)) {
      resident.push_back(t.resident_at_window);
    }
  }
  if (resident.empty()) return nullptr;
  const auto warm =
      std::count_if(resident.begin(), resident.end(), [](double r) { return r >= kWarmAtWindow; });
  const double med = median(resident);
  std::string text;
  if (warm == 0) {
    text = fmt::format(
        "cold: every trial's measured window began with less than {:.0f} % of the dataset in the "
        "page cache (median {:.0f} %)",
        100 * kWarmAtWindow, 100 * med);
  } else {
    text = fmt::format(
        "cold asked, but {} of the {} trials began measuring with at least {:.0f} % of the dataset "
        "in the page cache (median {:.0f} %): the warm-up read it back after the eviction, so "
        "those trials measured a warm cache; a shorter warm-up (phases.warmup_steps, --warmup-s) "
        "or a dataset larger than what warm-up reads keeps them cold",
        warm, resident.size(), 100 * kWarmAtWindow, 100 * med);
  }
  return {{"requested", "cold"},
          {"trials", resident.size()},
          {"warm_trials", warm},
          {"median_resident", med},
          {"threshold", kWarmAtWindow},
          {"cold_in_fact", warm == 0},
          {"text", text}};
}

double log_to_pct(double x) {
  return 100 * std::expm1(x);
}

double look_alpha(const ExperimentDesign& d, int round) {
  int prev = 0;
  for (int look : d.looks) {
    if (look >= round) {
      const auto frac = [&](int k) { return static_cast<double>(k) / d.spec.rounds; };
      return stats::obf_alpha_spent(frac(look), d.alpha) -
             stats::obf_alpha_spent(frac(prev), d.alpha);
    }
    prev = look;
  }
  return look_alpha(d, d.looks.back());
}

Analysis analyze(const ExperimentDesign& d, const std::vector<TrialRecord>& trials,
                 const std::map<size_t, double>& psnr, double alpha_nominal) {
  TrialIndex idx;
  for (const auto& t : trials)
    idx[{t.round, t.arm}] = &t;
  Analysis a;
  a.alpha_nominal = alpha_nominal;
  // Calibration: the A/A arm (index 1) against the base, at the design's 95 %.
  const Pairs aa = pair_with_base(idx, 1, d.spec.rounds);
  const stats::MeanInterval aa_t = stats::t_interval(aa.d, d.alpha);
  a.calibration.n = aa.d.size();
  a.calibration.half_width = aa_t.half_width;
  a.calibration.tau =
      std::isfinite(aa_t.half_width) ? std::max(aa_t.half_width, d.tau_floor) : d.tau_floor;
  a.calibration.mde = stats::min_detectable_effect(aa_t.sd, aa.d.size(), d.alpha, d.power);
  a.all_factor_arms_decided = true;
  for (size_t arm = 1; arm < d.arms.size(); ++arm) {
    a.arms.push_back(analyze_arm(d, arm, idx, aa, trials, psnr, alpha_nominal, a.calibration.tau));
    const std::string& v = a.arms.back().verdict;
    if (d.arms[arm].role == "factor" && v != "ADOPT" && v != "REJECT" && v != "INVALID")
      a.all_factor_arms_decided = false;
  }
  return a;
}

nlohmann::json to_json(const Calibration& c) {
  const auto num = finite_or_null;
  return {{"n", c.n},          {"aa_half_width", num(c.half_width)},
          {"tau", c.tau},      {"tau_pct", log_to_pct(c.tau)},
          {"mde", num(c.mde)}, {"mde_pct", num(log_to_pct(c.mde))}};
}

nlohmann::json to_json(const ArmResult& r, const ExperimentDesign& d) {
  using nlohmann::json;
  const auto num = finite_or_null;
  const auto pct_pair = [&](double lo, double hi) {
    return json::array({num(log_to_pct(lo)), num(log_to_pct(hi))});
  };
  const Arm& a = d.arms[r.arm];
  json guardrails = json::array();
  for (const auto& g : r.guardrails) {
    guardrails.push_back({{"name", g.name},
                          {"base", g.base},
                          {"arm", g.arm},
                          {"limit", g.limit},
                          {"p_worse", finite_or_null(g.p)},
                          {"ok", g.ok}});
  }
  return {{"arm", a.id},
          {"factor", a.factor ? json(d.factors[*a.factor].key) : json()},
          {"value", a.factor ? json(a.value) : json()},
          {"role", a.role},
          {"content", to_string(r.content)},
          {"n", r.n},
          {"base_median", num(r.base_median)},
          {"arm_median", num(r.arm_median)},
          {"effect", num(r.t.mean)},
          {"effect_pct", num(log_to_pct(r.t.mean))},
          {"ci", json::array({num(r.t.lo), num(r.t.hi)})},
          {"ci_pct", pct_pair(r.t.lo, r.t.hi)},
          {"bootstrap_ci_pct", pct_pair(r.bootstrap.lo, r.bootstrap.hi)},
          {"p_t", num(r.t.p)},
          {"p_wilcoxon", r.n > 0 ? json(r.wilcoxon.p) : json()},
          {"wilcoxon_exact", r.wilcoxon.exact},
          {"mde_pct", num(log_to_pct(r.mde))},
          {"drift",
           {{"base_rho", num(r.drift.base.rho)},
            {"base_p", num(r.drift.base.p)},
            {"base_change_pct", log_to_pct(r.drift.base_change)},
            {"d_rho", num(r.drift.d.rho)},
            {"d_p", num(r.drift.d.p)},
            {"d_change_pct", log_to_pct(r.drift.d_change)},
            {"drift", r.drift.drift}}},
          {"steady_trials", r.steady},
          {"nonsteady_trials", r.nonsteady},
          {"base_steady_trials", r.base_steady},
          {"base_nonsteady_trials", r.base_nonsteady},
          {"guardrails", guardrails},
          {"context",
           {{"host_peak_mib",
             {{"base", num(r.base_host_peak_mib)},
              {"arm", num(r.host_peak_mib)},
              {"why", "host-wide memory, which other processes move: context, not a guardrail"}}}}},
          {"correctness",
           {{"kind", r.correctness.kind},
            {"ok", r.correctness.ok ? json(*r.correctness.ok) : json()},
            {"detail", r.correctness.detail}}},
          {"verdict", r.verdict},
          {"reason", r.reason}};
}

}  // namespace mmprof
