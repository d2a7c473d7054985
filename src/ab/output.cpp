#include "ab/output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "rundir/json_read.hpp"
#include "stats/descriptive.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// Per-arm figures read from the trials: median metric, tails and memory, summed errors.
struct ArmTrials {
  size_t complete = 0;
  double metric = NAN, step_p99 = NAN, wait_p99 = NAN, pss = NAN;
  double first_batch = NAN, gap_ratio = NAN, sequential = NAN;
  int64_t errors = 0;
};

double median_at(const json& trials, const std::string& arm, const std::string& field) {
  std::vector<double> v;
  for (const auto& t : trials) {
    if (t["arm"] != arm) continue;
    if (const auto x = rundir::number_at(t, field)) v.push_back(*x);
  }
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

ArmTrials arm_trials(const json& trials, const std::string& arm) {
  ArmTrials a;
  for (const auto& t : trials) {
    if (t["arm"] != arm) continue;
    if (t["status"] == "complete") ++a.complete;
    a.errors += t["errors"].get<int64_t>();
  }
  a.metric = median_at(trials, arm, "/metric");
  a.step_p99 = median_at(trials, arm, "/latency_ms/step_p99");
  a.wait_p99 = median_at(trials, arm, "/latency_ms/wait_p99");
  a.pss = median_at(trials, arm, "/pss_peak_mib");
  a.first_batch = median_at(trials, arm, "/time_to_first_batch_ms");
  a.gap_ratio = median_at(trials, arm, "/shuffle_gap_ratio");
  a.sequential = median_at(trials, arm, "/sequential_fraction");
  return a;
}

std::string num(const json& v, const char* f = "{:.2f}") {
  return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : "";
}

std::string num(double v, const char* f = "{:.2f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(f), v) : "";
}

std::string guardrail_text(const json& r) {
  std::string failed;
  for (const auto& g : r["guardrails"]) {
    if (g["ok"].get<bool>()) continue;
    if (!failed.empty()) failed += ';';
    failed += g["name"].get<std::string>();
  }
  return failed.empty() ? "ok" : failed;
}

std::string correctness_text(const json& r) {
  const json& ok = r["correctness"]["ok"];
  return ok.is_boolean() ? (ok.get<bool>() ? "ok" : "failed") : "n/a";
}

const json kNoResult = json::object();

// The result of `arm`, or an empty object for the base.
const json& result_of(const json& experiment, const std::string& arm) {
  for (const auto& r : experiment["results"])
    if (r["arm"] == arm) return r;
  return kNoResult;
}

// An arm's content as the experiment found it (its result's: the job may have shown that a
// factor changes content there), else as designed.
std::string arm_content(const json& arm, const json& result) {
  return result.contains("content") ? result["content"].get<std::string>()
                                    : arm["content"].get<std::string>();
}

std::string text_or_empty(const json& r, const char* key) {
  return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "";
}

std::string of_trials(const json& r, const char* nonsteady, const char* steady) {
  const int n = r.value(nonsteady, 0), m = n + r.value(steady, 0);
  return n > 0 ? fmt::format("{} of {}", n, m) : "";
}

// The trials whose steady-state check failed twice, per arm ("base 6 of 6, A/A 2 of 6"), from the
// results' counts; empty when every trial settled (or none was checked).
std::string nonsteady_text(const json& e) {
  std::vector<std::string> parts;
  const json& results = e["results"];
  if (!results.empty()) {
    const std::string base = of_trials(results[0], "base_nonsteady_trials", "base_steady_trials");
    if (!base.empty()) parts.push_back("base " + base);
  }
  for (const auto& r : results) {
    const std::string arm = of_trials(r, "nonsteady_trials", "steady_trials");
    if (!arm.empty()) parts.push_back(r["arm"].get<std::string>() + " " + arm);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string matrix_csv(const json& e) {
  std::string out =
      "arm,factor,value,role,content,n,metric,base_median,arm_median,effect_pct,ci_low_pct,"
      "ci_high_pct,boot_low_pct,boot_high_pct,p_t,p_wilcoxon,mde_pct,tau_pct,drift,"
      "nonsteady_trials,step_p99_ms,wait_p99_ms,pss_peak_mib,errors,correctness,guardrails,"
      "verdict,reason\n";
  const json& design = e["design"];
  const std::string metric = design["metric"]["key"].get<std::string>();
  const std::string tau = num(e["calibration"]["tau_pct"], "{:.3f}");
  const ArmTrials base = arm_trials(e["trials"], "base");
  for (const auto& arm : design["arms"]) {
    const std::string id = arm["id"].get<std::string>();
    const json& r = result_of(e, id);
    const ArmTrials t = arm_trials(e["trials"], id);
    const bool stats = r.contains("n");
    std::vector<std::string> f = {
        csv_field(id),
        csv_field(arm["factor"].is_string() ? arm["factor"].get<std::string>() : ""),
        csv_field(arm["value"].is_string() ? arm["value"].get<std::string>() : ""),
        arm["role"].get<std::string>(),
        arm_content(arm, r),
        stats ? std::to_string(r["n"].get<size_t>()) : std::to_string(t.complete),
        metric,
        num(base.metric),
        num(t.metric),
        stats ? num(r["effect_pct"], "{:.3f}") : "",
        stats ? num(r["ci_pct"][0], "{:.3f}") : "",
        stats ? num(r["ci_pct"][1], "{:.3f}") : "",
        stats ? num(r["bootstrap_ci_pct"][0], "{:.3f}") : "",
        stats ? num(r["bootstrap_ci_pct"][1], "{:.3f}") : "",
        stats ? num(r["p_t"], "{:.6f}") : "",
        stats ? num(r["p_wilcoxon"], "{:.6f}") : "",
        stats ? num(r["mde_pct"], "{:.3f}") : "",
        stats ? tau : "",
        stats ? (r["drift"]["drift"].get<bool>() ? "true" : "false") : "",
        stats ? std::to_string(r["nonsteady_trials"].get<int>()) : "",
        num(t.step_p99, "{:.4f}"),
        num(t.wait_p99, "{:.4f}"),
        num(t.pss, "{:.1f}"),
        std::to_string(t.errors),
        stats ? correctness_text(r) : "",
        stats ? guardrail_text(r) : "",
        text_or_empty(r, "verdict"),
        csv_field(text_or_empty(r, "reason"))};
    for (size_t i = 0; i < f.size(); ++i)
      out += f[i] + (i + 1 < f.size() ? "," : "\n");
  }
  return out;
}

std::string matrix_md(const json& e) {
  const json& design = e["design"];
  std::string out = fmt::format(
      "# mmprof ab: {}\n\nmetric `{}` ({}); {} rounds planned, looks at {}; seed {}; cache {}; "
      "tau {} % (floor {:.1f} %); machine MDE {} %; status **{}**\n\n",
      e["experiment_dir"].get<std::string>(), design["metric"]["key"].get<std::string>(),
      design["metric"]["why"].get<std::string>(), design["rounds"].get<int>(),
      design["looks"].dump(), design["seed"].get<uint64_t>(), design["cache"].get<std::string>(),
      num(e["calibration"]["tau_pct"]), 100 * design["tau_floor"].get<double>(),
      num(e["calibration"]["mde_pct"]), e["status"].get<std::string>());
  if (e.contains("cache_at_window") && e["cache_at_window"].is_object()) {
    const json& c = e["cache_at_window"];
    out += fmt::format("{}cache at the measured window: {}{}\n\n",
                       c.value("cold_in_fact", false) ? "" : "**", c.value("text", ""),
                       c.value("cold_in_fact", false) ? "" : "**");
  }
  out +=
      "| arm | content | n | median samples/s | effect (95% CI) | bootstrap CI | p (t / Wilcoxon) "
      "| MDE | guardrails | correctness | verdict | reason |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& arm : design["arms"]) {
    const std::string id = arm["id"].get<std::string>();
    const json& r = result_of(e, id);
    const ArmTrials t = arm_trials(e["trials"], id);
    if (!r.contains("n")) {
      out += fmt::format("| {} | {} | {} | {} | | | | | | | | |\n", id, arm_content(arm, r),
                         t.complete, num(t.metric, "{:.1f}"));
      continue;
    }
    out += fmt::format(
        "| {} | {} | {} | {} | {} % [{}, {}] | [{}, {}] | {} / {} | {} % | {} | {} | **{}** | {} "
        "|\n",
        id, arm_content(arm, r), r["n"].get<size_t>(), num(t.metric, "{:.1f}"),
        num(r["effect_pct"], "{:+.1f}"), num(r["ci_pct"][0], "{:+.1f}"),
        num(r["ci_pct"][1], "{:+.1f}"), num(r["bootstrap_ci_pct"][0], "{:+.1f}"),
        num(r["bootstrap_ci_pct"][1], "{:+.1f}"), num(r["p_t"], "{:.3g}"),
        num(r["p_wilcoxon"], "{:.3g}"), num(r["mde_pct"], "{:.1f}"), guardrail_text(r),
        correctness_text(r), r["verdict"].get<std::string>(), r["reason"].get<std::string>());
  }
  // Beside the speed: what each arm's order and reading are (a layout or a shuffle buffer trades
  // randomness and the first batch's wait for sequential reads).
  out +=
      "\n| arm | first batch ms | shuffle gap ratio (1 = permutation) | sequential reads |\n"
      "|---|---|---|---|\n";
  for (const auto& arm : design["arms"]) {
    const ArmTrials t = arm_trials(e["trials"], arm["id"].get<std::string>());
    out +=
        fmt::format("| {} | {} | {} | {} |\n", arm["id"].get<std::string>(),
                    num(t.first_batch, "{:.1f}"), num(t.gap_ratio, "{:.3f}"),
                    std::isfinite(t.sequential) ? fmt::format("{:.0f} %", 100 * t.sequential) : "");
  }
  if (const std::string nonsteady = nonsteady_text(e); !nonsteady.empty()) {
    out += fmt::format(
        "\nTrials that never reached steady state (the check failed twice): {}. When they are "
        "most of an arm's or of the base's trials, the arm's verdict is withheld (INCONCLUSIVE, "
        "\"would be ...\") unless a hard limit (memory budget, errors) rejected it.\n",
        nonsteady);
  }
  return out;
}

std::string inconclusive_next(double effect_pct, double ci_lo_pct, double ci_hi_pct, double tau_pct,
                              int64_t n) {
  const auto log1p_pct = [](double pct) { return std::log1p(pct / 100); };
  const double lo = log1p_pct(ci_lo_pct), hi = log1p_pct(ci_hi_pct), tau = log1p_pct(tau_pct);
  const double centre = (lo + hi) / 2, half = (hi - lo) / 2;
  const double margin = std::fabs(std::fabs(centre) - tau);  // to the band's edge
  // Only an interval across an edge of the band is undecided for lack of rounds (one wholly
  // outside it was withheld for another reason: drift, trials not steady, a rank test).
  const bool straddles = (lo < tau && hi > tau) || (lo < -tau && hi > -tau);
  if (!straddles || !(half > 0) || n < 2 || !(margin > 0)) return "";
  const auto rounds =
      static_cast<int64_t>(std::ceil(static_cast<double>(n) * (half / margin) * (half / margin)));
  const std::string estimate = fmt::format("{:+.1f} %", effect_pct);
  if (std::fabs(centre) <= tau) {
    return fmt::format(
        "the estimate ({}) lies inside the ±{:.1f} % band of this machine's noise: more rounds can "
        "show no change at best (about {} rounds for EQUIVALENT), not an effect of this size",
        estimate, tau_pct, rounds);
  }
  if (rounds > 200) {
    return fmt::format(
        "this machine is too noisy for an effect of {} against its ±{:.1f} % band (about {} "
        "rounds): a quieter machine, or longer trials",
        estimate, tau_pct, rounds);
  }
  return fmt::format(
      "about {} rounds in all (--rounds {}) would decide it if the estimate ({}) "
      "holds",
      rounds, rounds, estimate);
}

std::string ab_terminal(const json& e) {
  const json& design = e["design"];
  std::string out = fmt::format(
      "mmprof ab: {} ({}), {} rounds; noise band ±{} % (A/A), smallest detectable effect {} %; "
      "{}\n",
      design["metric"]["key"].get<std::string>(), design["metric"].value("unit", ""),
      design["rounds"].get<int>(), num(e["calibration"]["tau_pct"], "{:.1f}"),
      num(e["calibration"]["mde_pct"], "{:.1f}"), e["status"].get<std::string>());
  size_t width = 4;
  for (const auto& arm : design["arms"])
    width = std::max(width, arm["id"].get<std::string>().size());
  for (const auto& arm : design["arms"]) {
    const std::string id = arm["id"].get<std::string>();
    const json& r = result_of(e, id);
    const ArmTrials t = arm_trials(e["trials"], id);
    out += fmt::format("  {:<{}}  {:>9} {}", id, width, num(t.metric, "{:.1f}"),
                       design["metric"].value("unit", ""));
    const json ci = r.value("ci_pct", json());
    if (!r.contains("n") || !r["effect_pct"].is_number() || !ci.is_array() || ci.size() != 2 ||
        !ci[0].is_number() || !ci[1].is_number()) {
      out += fmt::format("  ({} trials)\n", t.complete);
      continue;
    }
    const double effect = r["effect_pct"].get<double>();
    const double lo = ci[0].get<double>(), hi = ci[1].get<double>();
    // The ratio and its interval's half-width; a slower arm as the base's ratio to it.
    const bool faster = effect >= 0;
    const double ratio = faster ? 1 + effect / 100 : 1 / (1 + effect / 100);
    const double spread = faster ? (hi - lo) / 200 : (1 / (1 + lo / 100) - 1 / (1 + hi / 100)) / 2;
    const std::string verdict = r["verdict"].get<std::string>();
    out += fmt::format(
        "  {:.2f} ± {:.2f} × {} than base  {}\n      {:+.1f} % (95 % CI {:+.1f} .. {:+.1f} %, {} "
        "rounds): {}\n",
        ratio, spread, faster ? "faster" : "slower", verdict, effect, lo, hi, r["n"].get<int64_t>(),
        r["reason"].get<std::string>());
    // The A/A arm calibrates: it has nothing to decide.
    const json tau = e["calibration"].value("tau_pct", json());
    if (verdict == "INCONCLUSIVE" && tau.is_number() && arm.value("role", "") != "calibration") {
      const std::string next =
          inconclusive_next(effect, lo, hi, tau.get<double>(), r["n"].get<int64_t>());
      if (!next.empty()) out += fmt::format("      next: {}\n", next);
    }
  }
  return out;
}

void write_experiment_files(const std::filesystem::path& dir, const json& experiment) {
  write_json_atomic(dir / run_file::experiment, experiment);
  write_file_atomic(dir / run_file::matrix_csv, matrix_csv(experiment));
  write_file_atomic(dir / run_file::matrix_md, matrix_md(experiment));
}

}  // namespace mmprof
