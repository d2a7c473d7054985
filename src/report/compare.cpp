// compare_runs: two single runs (--compare BASE NEW) against the compare criteria. A single run
// has no repeat to estimate noise from, so the judgements use the per-step values of both runs:
// the throughput by Welch's t interval of the difference of mean step time per sample, the p99s
// by a percentile bootstrap interval of their ratio; each says "inconclusive" when its interval
// straddles the limit, and a p99 of fewer than 100 steps (about the slowest step) is never a
// regression.
#include <fmt/format.h>

#include <cmath>

#include "report/criteria.hpp"
#include "report/json_access.hpp"
#include "stats/descriptive.hpp"
#include "stats/inference.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// A p99 is judged only with at least this many steps on each side: then a step lies beyond it.
constexpr size_t kTailSteps = 100;
constexpr int kBootstrapResamples = 2000;

// Milliseconds per sample of every measured step of `phase`.
std::vector<double> ms_per_sample(const std::vector<StepRow>& steps, const std::string& phase) {
  std::vector<double> out;
  for (const StepRow& r : steps) {
    if (r.phase == phase && r.samples > 0)
      out.push_back(r.step_ms / static_cast<double>(r.samples));
  }
  return out;
}

}  // namespace

std::optional<std::pair<double, double>> welch_change_pct(const std::vector<double>& a,
                                                          const std::vector<double>& b) {
  const auto ci = stats::welch_interval(a, b, 0.05);
  const double ma = a.empty() ? 0 : mean(a);
  if (!ci || ma <= 0) return std::nullopt;
  return std::make_pair(100 * ci->lo / ma, 100 * ci->hi / ma);
}

namespace {

json row(const std::string& name, std::optional<double> base, std::optional<double> next,
         std::optional<double> limit_pct, bool higher_is_worse) {
  json r = {{"name", name},          {"base", or_null(base)},           {"new", or_null(next)},
            {"change_pct", nullptr}, {"limit_pct", or_null(limit_pct)}, {"outcome", "pass"}};
  if (base && next && *base > 0) {
    const double change = 100 * (*next / *base - 1);
    r["change_pct"] = change;
    const double worse = higher_is_worse ? change : -change;
    if (limit_pct && worse > *limit_pct) r["outcome"] = "regression";
  }
  return r;
}

// A step's value `which` ("step" or "wait", ms) over every measured step of `phase`.
std::vector<double> step_values(const std::vector<StepRow>& steps, const std::string& phase,
                                const std::string& which) {
  std::vector<double> out;
  for (const StepRow& r : steps)
    if (r.phase == phase) out.push_back(which == "wait" ? r.wait_ms : r.step_ms);
  return out;
}

// The p99 row of `which` judged on its noise: the 95 % percentile bootstrap interval of
// p99(new) / p99(base) over both runs' measured steps (change_ci_pct): regression when it lies
// above the limit, inconclusive when it straddles it. With fewer than kTailSteps steps on a side
// the p99 is about the slowest step, whose noise one run cannot show: inconclusive, with why.
json p99_row(const RunData& base, const RunData& next, const std::string& phase,
             const std::string& which, double limit_pct) {
  const auto p99 = [&](const RunData& run) {
    return (which == "step" ? run.summary.latency.step : run.summary.latency.wait).p99;
  };
  json r = row(fmt::format("latency_ms.{}.p99", which), p99(base), p99(next), limit_pct, true);
  const auto a = step_values(base.steps, phase, which), b = step_values(next.steps, phase, which);
  r["steps"] = {a.size(), b.size()};
  r["change_ci_pct"] = nullptr;
  if (a.size() < kTailSteps || b.size() < kTailSteps) {
    r["outcome"] = "inconclusive";
    r["why"] = fmt::format(
        "{} and {} measured steps: a p99 needs at least {} steps on each side (a step beyond "
        "it) before its noise can be estimated",
        a.size(), b.size(), kTailSteps);
    return r;
  }
  const stats::Interval ci =
      stats::bootstrap_quantile_ratio_ci(a, b, 0.99, 0.05, kBootstrapResamples, 1);
  if (!std::isfinite(ci.lo)) {
    r["outcome"] = "inconclusive";
    r["why"] = "the base's p99 is 0 in some resamples: no ratio";
    return r;
  }
  const double lo = 100 * (ci.lo - 1), hi = 100 * (ci.hi - 1);
  r["change_ci_pct"] = {lo, hi};
  r["outcome"] = lo > limit_pct ? "regression" : hi > limit_pct ? "inconclusive" : "pass";
  if (r["outcome"] == "inconclusive") {
    r["why"] = fmt::format("{:+.1f} to {:+.1f} % (95 % CI): cannot rule out more than {:.0f} %", lo,
                           hi, limit_pct);
  }
  return r;
}

// " (+12.0 %, limit 10 %)" for a row with both, with its interval when it has one; a change from
// 0 (errors) has no percentage.
std::string change_text(const json& r) {
  if (!r["change_pct"].is_number()) return "";
  const double change = r["change_pct"].get<double>();
  const std::string ci =
      r.contains("change_ci_pct") && r["change_ci_pct"].is_array()
          ? fmt::format(", 95 % CI {:+.1f} to {:+.1f} %", r["change_ci_pct"][0].get<double>(),
                        r["change_ci_pct"][1].get<double>())
          : "";
  return r["limit_pct"].is_number() ? fmt::format(" ({:+.1f} %{}, limit {:.0f} %)", change, ci,
                                                  r["limit_pct"].get<double>())
                                    : fmt::format(" ({:+.1f} %{})", change, ci);
}

}  // namespace

// The throughput judgement from the step-time interval: {outcome, reason}.
std::pair<std::string, std::string> judge_step_time(
    const std::optional<std::pair<double, double>>& ci, double drop) {
  if (!ci)
    return {"inconclusive", "fewer than 2 measured steps on a side: no interval for the step time"};
  const std::string range =
      fmt::format("time per sample changed {:+.1f} to {:+.1f} % (95 % CI)", ci->first, ci->second);
  if (ci->first > drop)
    return {"regression", fmt::format("{}: slower by more than the allowed {:.0f} %", range, drop)};
  if (ci->second > drop) {
    return {"inconclusive",
            fmt::format("{}: cannot rule out more than {:.0f} % slower", range, drop)};
  }
  return {"pass", fmt::format("{}, within {:.0f} %", range, drop)};
}

json compare_runs(const RunData& base, const RunData& next, const Criteria& c) {
  const bool e2e = base.summary.throughput.end_to_end.samples_per_s &&
                   next.summary.throughput.end_to_end.samples_per_s;
  const std::string phase = e2e ? "end_to_end" : "pipeline";
  const std::string metric = "throughput." + phase + ".samples_per_s";
  const auto ci =
      welch_change_pct(ms_per_sample(base.steps, phase), ms_per_sample(next.steps, phase));
  const auto [step_outcome, step_reason] = judge_step_time(ci, c.compare_max_throughput_drop_pct);
  json rows = json::array();
  const auto rate = [&](const RunData& r) {
    return phase_rate(r.summary, phase, &PhaseRates::samples_per_s);
  };
  json throughput = row(metric, rate(base), rate(next), c.compare_max_throughput_drop_pct, false);
  throughput["outcome"] = step_outcome;  // judged on the step-time interval, not two numbers
  rows.push_back(throughput);
  rows.push_back(row("stall_fraction", base.summary.stall_fraction, next.summary.stall_fraction,
                     std::nullopt, true));
  for (const char* which : {"step", "wait"})
    rows.push_back(p99_row(base, next, phase, which, c.compare_max_p99_regression_pct));
  // Memory is judged per unit of throughput (a change that adds workers adds their memory: a
  // cost only when the throughput does not grow with it) and against the budget, never by its
  // raw growth.
  const auto pss = [](const RunData& r) { return r.summary.memory.total_pss_peak_mib; };
  const auto pss_per_rate = [&](const RunData& r) -> std::optional<double> {
    const auto samples_per_s = rate(r);
    return pss(r) && samples_per_s && *samples_per_s > 0 ? std::optional(*pss(r) / *samples_per_s)
                                                         : std::nullopt;
  };
  rows.push_back(row("memory.total_pss_peak_mib per samples/s", pss_per_rate(base),
                     pss_per_rate(next), c.compare_max_memory_growth_pct, true));
  if (const auto budget =
          memory_budget(c, number_at(next.manifest, "/hardware/memory/total_mib"))) {
    json b = row("memory.total_pss_peak_mib", pss(base), pss(next), std::nullopt, true);
    b["limit_mib"] = *budget;
    if (pss(next) && *pss(next) > *budget) b["outcome"] = "regression";
    rows.push_back(b);
  }
  const auto be = static_cast<double>(base.summary.errors.count);
  const auto ne = static_cast<double>(next.summary.errors.count);
  json errors = row("errors.count", be, ne, std::nullopt, true);
  if (ne > be) errors["outcome"] = "regression";
  rows.push_back(errors);

  json out = {
      {"base", base.dir.string()}, {"new", next.dir.string()}, {"metric", metric}, {"rows", rows}};
  out["step_time_ci_pct"] = ci ? json::array({ci->first, ci->second}) : json(nullptr);
  std::string outcome = step_outcome, reason = step_reason;
  for (const auto& r : rows) {
    if (outcome != "regression" && r["outcome"] == "regression") {
      outcome = "regression";
      reason = r.contains("limit_mib")
                   ? fmt::format("{} is {:.0f} MiB, over the {:.0f} MiB budget",
                                 r["name"].get<std::string>(), r["new"].get<double>(),
                                 r["limit_mib"].get<double>())
                   : fmt::format("{} went from {:.4g} to {:.4g}{}", r["name"].get<std::string>(),
                                 r["base"].get<double>(), r["new"].get<double>(), change_text(r));
    }
  }
  if (next.summary.status != "complete") {
    outcome = "regression";
    reason = fmt::format("{} did not complete ({})", next.dir.string(),
                         next.summary.status.empty() ? "unknown" : next.summary.status);
  }
  out["outcome"] = outcome;
  out["reason"] = "compare: " + reason;
  return out;
}

}  // namespace mmprof::report
