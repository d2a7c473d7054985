#include "report/criteria.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "mmprof/error.hpp"
#include "report/json_access.hpp"
#include "report/yaml_json.hpp"
#include "stats/descriptive.hpp"
#include "util/did_you_mean.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// Reads section.key into `out` when present; a wrong type names the key.
template <typename T>
void read(const json& j, const std::string& section, const std::string& key, T& out,
          const std::string& name) {
  const json v = value_at(j, "/" + section + "/" + key);
  if (v.is_null()) return;
  try {
    out = v.get<T>();
  } catch (const json::exception&) {
    throw UsageError(fmt::format("{}: {}.{} has the wrong type ({})", name, section, key,
                                 v.dump(-1, ' ', false, json::error_handler_t::replace)));
  }
}

void check_keys(const json& j, const std::string& name) {
  static const std::map<std::string, std::vector<std::string>> known = {
      {"adopt",
       {"accepted_verdicts", "min_throughput_gain_pct", "max_p99_regression_pct",
        "memory_budget_mib", "memory_budget_host_fraction", "require_correctness"}},
      {"compare", {"max_throughput_drop_pct", "max_p99_regression_pct", "max_memory_growth_pct"}},
      {"run", {"max_stall_fraction"}},
      {"rollback", {"window", "throughput_drop_pct", "p99_regression_pct"}},
      {"gate", {"inconclusive_exit"}},
      {"version", {}}};
  for (const auto& [section, body] : j.items()) {
    const auto it = known.find(section);
    if (it == known.end()) {
      std::vector<std::string> sections;
      sections.reserve(known.size());
      for (const auto& [s, keys] : known)
        sections.push_back(s);
      throw UsageError(fmt::format("{}: unknown section '{}'{}", name, section,
                                   did_you_mean(section, sections, "", "; ")));
    }
    if (!body.is_object()) continue;
    for (const auto& [key, v] : body.items()) {
      if (std::find(it->second.begin(), it->second.end(), key) != it->second.end()) continue;
      throw UsageError(fmt::format("{}: unknown key '{}.{}'{}", name, section, key,
                                   did_you_mean(key, it->second, section + ".", "; ")));
    }
  }
}

// Median over the arm's complete trials of trials[].<pointer>.
std::optional<double> trial_median(const json& experiment, const std::string& arm,
                                   const std::string& pointer) {
  std::vector<double> v;
  for (const auto& t : value_at(experiment, "/trials")) {
    if (t.value("arm", "") != arm || t.value("status", "") != "complete") continue;
    if (const auto x = number_at(t, pointer)) v.push_back(*x);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

json trigger(const std::string& metric, const char* op, double threshold, const std::string& window,
             const std::string& why) {
  return {{"metric", metric},
          {"condition", op},
          {"threshold", threshold},
          {"window", window},
          {"why", why}};
}

// How far a job's stall fraction may rise over the adopted arm's before it rolls back: 5 points
// is the width of TensorFlow Profiler's "not input-bound" band (docs/report.md).
constexpr double kRollbackStallPoints = 0.05;

json rollback_triggers(const json& e, const json& r, const Criteria& c,
                       std::optional<double> budget) {
  json out = json::array();
  const std::string arm = r.value("arm", "");
  const std::string metric =
      string_at(e, "/design/metric/key", "throughput.end_to_end.samples_per_s");
  if (const auto m = number_at(r, "/arm_median")) {
    out.push_back(trigger(
        metric, "<", *m * (1 - c.rollback_throughput_drop_pct / 100), c.rollback_window,
        fmt::format("{:.0f} % below the adopted arm's median", c.rollback_throughput_drop_pct)));
  }
  if (const auto p99 = trial_median(e, arm, "/latency_ms/step_p99")) {
    out.push_back(trigger(
        "latency_ms.step.p99", ">", *p99 * (1 + c.rollback_p99_regression_pct / 100),
        c.rollback_window,
        fmt::format("{:.0f} % above the adopted arm's step p99", c.rollback_p99_regression_pct)));
  }
  if (budget) {
    out.push_back(
        trigger("memory.total_pss_peak_mib", ">", *budget, c.rollback_window, "the memory budget"));
  }
  // A user's job: triggers in figures the job itself has in production, beside its throughput.
  if (value_at(e, "/design/command").is_array()) {
    if (const auto stall = trial_median(e, arm, "/stall_fraction")) {
      out.push_back(trigger("stall_fraction", ">", *stall + kRollbackStallPoints, c.rollback_window,
                            fmt::format("{:.0f} points above the adopted arm's stall fraction",
                                        100 * kRollbackStallPoints)));
    }
    if (const auto pss = trial_median(e, arm, "/pss_peak_mib")) {
      out.push_back(trigger("memory.total_pss_peak_mib", ">",
                            *pss * (1 + c.compare_max_memory_growth_pct / 100), c.rollback_window,
                            fmt::format("{:.0f} % above the adopted arm's PSS (workers included)",
                                        c.compare_max_memory_growth_pct)));
    }
  }
  const double base_errors = trial_median(e, "base", "/errors").value_or(0);
  out.push_back(trigger("errors.count", ">", base_errors, c.rollback_window,
                        "more bad samples than the base had"));
  return out;
}

// How many of an arm's trials ran the steady-state check, and how many never passed it.
struct SteadyCount {
  int checked = 0, nonsteady = 0;
  bool mostly() const { return 2 * nonsteady > checked; }
};

SteadyCount steady_count(const json& experiment, const std::string& arm) {
  SteadyCount n;
  for (const auto& t : value_at(experiment, "/trials")) {
    const json steady = t.value("steady", json());
    if (t.value("arm", "") != arm || !steady.is_boolean()) continue;
    ++n.checked;
    n.nonsteady += steady == false;
  }
  return n;
}

// Trials that never reached steady state, of the arm and of the base: a doubt when most of either
// never settled and ab still decided the arm (an experiment file from before ab withheld such
// verdicts), a note otherwise.
struct SteadyFindings {
  json counts;             // the decision's steady_state
  bool unsettled = false;  // most trials of the arm or of the base never settled
};

SteadyFindings steady_findings(const json& e, const std::string& arm, const std::string& verdict,
                               std::vector<std::string>& doubts, std::vector<std::string>& notes) {
  const SteadyCount a = steady_count(e, arm), b = steady_count(e, "base");
  const bool decided = verdict == "ADOPT" || verdict == "REJECT" || verdict == "EQUIVALENT";
  for (const auto& [who, n] : {std::pair{"this arm", a}, std::pair{"the base", b}}) {
    if (n.nonsteady == 0) continue;
    const std::string text = fmt::format("{} of {} trials of {} never reached steady state",
                                         n.nonsteady, n.checked, who);
    if (decided && n.mostly()) {
      doubts.push_back(fmt::format("ab verdict {} rests on non-steady trials: {}", verdict, text));
    } else {
      notes.push_back(text);
    }
  }
  return {{{"arm_trials", a.checked},
           {"arm_nonsteady", a.nonsteady},
           {"base_trials", b.checked},
           {"base_nonsteady", b.nonsteady}},
          a.mostly() || b.mostly()};
}

// p99 growth of the arm over the base (medians over rounds), or nullopt.
std::optional<double> p99_growth_pct(const json& e, const std::string& arm, const char* which) {
  const std::string pointer = fmt::format("/latency_ms/{}_p99", which);
  const auto a = trial_median(e, arm, pointer), b = trial_median(e, "base", pointer);
  if (!a || !b || *b <= 0) return std::nullopt;
  return 100 * (*a / *b - 1);
}

// The exit code of an inconclusive gate: 5 (its own), or 0 or 1 for a CI that wants it to pass
// or fail; 2 is refused because it means a usage error.
void check_inconclusive_exit(int code, const std::string& name) {
  if (code == static_cast<int>(ExitCode::ok) || code == static_cast<int>(ExitCode::failure) ||
      code == static_cast<int>(ExitCode::inconclusive))
    return;
  throw UsageError(fmt::format(
      "{}: gate.inconclusive_exit is {}; it must be 0 (pass), 1 (fail) or 5 (inconclusive){}", name,
      code, code == static_cast<int>(ExitCode::usage) ? ", as 2 means a usage error" : ""));
}

}  // namespace

const char* to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::pass:
      return "pass";
    case Outcome::inconclusive:
      return "inconclusive";
    case Outcome::regression:
      return "regression";
  }
  return "?";
}

Criteria parse_criteria(const std::string& text, const std::string& name) {
  const json j = yaml_to_json(text, name);
  if (!j.is_object()) throw UsageError(name + " is not a YAML map of criteria");
  check_keys(j, name);
  Criteria c;
  c.source = j;
  read(j, "adopt", "accepted_verdicts", c.accepted_verdicts, name);
  read(j, "adopt", "min_throughput_gain_pct", c.min_throughput_gain_pct, name);
  read(j, "adopt", "max_p99_regression_pct", c.max_p99_regression_pct, name);
  double budget = 0;
  if (!value_at(j, "/adopt/memory_budget_mib").is_null()) {
    read(j, "adopt", "memory_budget_mib", budget, name);
    c.memory_budget_mib = budget;
  }
  read(j, "adopt", "memory_budget_host_fraction", c.memory_budget_host_fraction, name);
  if (!(c.memory_budget_host_fraction > 0 && c.memory_budget_host_fraction <= 1))
    throw UsageError(name + ": adopt.memory_budget_host_fraction must be in (0, 1]");
  read(j, "adopt", "require_correctness", c.require_correctness, name);
  read(j, "compare", "max_throughput_drop_pct", c.compare_max_throughput_drop_pct, name);
  read(j, "compare", "max_p99_regression_pct", c.compare_max_p99_regression_pct, name);
  read(j, "compare", "max_memory_growth_pct", c.compare_max_memory_growth_pct, name);
  read(j, "run", "max_stall_fraction", c.run_max_stall_fraction, name);
  read(j, "rollback", "window", c.rollback_window, name);
  read(j, "rollback", "throughput_drop_pct", c.rollback_throughput_drop_pct, name);
  read(j, "rollback", "p99_regression_pct", c.rollback_p99_regression_pct, name);
  read(j, "gate", "inconclusive_exit", c.inconclusive_exit, name);
  check_inconclusive_exit(c.inconclusive_exit, name);
  return c;
}

std::optional<double> memory_budget(const Criteria& c, std::optional<double> host_memory_mib) {
  if (c.memory_budget_mib) return c.memory_budget_mib;
  if (host_memory_mib && *host_memory_mib > 0)
    return c.memory_budget_host_fraction * *host_memory_mib;
  return std::nullopt;
}

json decide_experiment(const json& e, const Criteria& c, std::optional<double> host_memory_mib) {
  const std::optional<double> budget = memory_budget(c, host_memory_mib);
  json decisions = json::array();
  for (const auto& r : value_at(e, "/results")) {
    if (r.value("role", "") != "factor") continue;
    const std::string arm = r.value("arm", "");
    const std::string verdict = r.value("verdict", "");
    std::vector<std::string> regressions, doubts, notes;
    if (c.require_correctness && value_at(r, "/correctness/ok") == false) {
      regressions.push_back("correctness lost: " +
                            string_at(r, "/correctness/detail", "check failed"));
    }
    if (verdict == "INVALID" || verdict == "REJECT")
      regressions.push_back(fmt::format("ab verdict {}: {}", verdict, r.value("reason", "")));
    if (verdict == "INCONCLUSIVE")
      doubts.push_back("ab verdict INCONCLUSIVE: " + r.value("reason", ""));
    const SteadyFindings steady = steady_findings(e, arm, verdict, doubts, notes);
    // A tail measured in trials that never settled is warm-up's as much as the change's: doubtful,
    // not a regression (as mmprof ab withholds its paired guardrails).
    for (const char* which : {"step", "wait"}) {
      const auto g = p99_growth_pct(e, arm, which);
      if (g && *g > c.max_p99_regression_pct) {
        (steady.unsettled ? doubts : regressions)
            .push_back(fmt::format("{} p99 grew {:.1f} % (max {:.0f} %){}", which, *g,
                                   c.max_p99_regression_pct,
                                   steady.unsettled ? " on mostly non-steady trials" : ""));
      }
    }
    const auto pss = trial_median(e, arm, "/pss_peak_mib");
    if (budget && pss && *pss > *budget) {
      regressions.push_back(
          fmt::format("peak PSS {:.0f} MiB over the {:.0f} MiB budget", *pss, *budget));
    }
    const auto lo = number_at(r, "/ci_pct/0"), hi = number_at(r, "/ci_pct/1");
    const bool accepted = std::find(c.accepted_verdicts.begin(), c.accepted_verdicts.end(),
                                    verdict) != c.accepted_verdicts.end();
    const bool gain = lo && *lo > c.min_throughput_gain_pct;
    if (!gain && hi && *hi > c.min_throughput_gain_pct && verdict != "REJECT") {
      doubts.push_back(
          fmt::format("the gain's CI [{:.1f}, {:.1f}] % straddles the required {:.0f} %",
                      lo.value_or(0), *hi, c.min_throughput_gain_pct));
    }
    if (!gain) {
      notes.push_back(
          fmt::format("gain CI lower bound not above {:.0f} %", c.min_throughput_gain_pct));
    }
    if (!accepted) notes.push_back("verdict " + verdict + " is not an accepted verdict");
    const Outcome outcome = !regressions.empty() ? Outcome::regression
                            : !doubts.empty()    ? Outcome::inconclusive
                                                 : Outcome::pass;
    const bool adopt = regressions.empty() && doubts.empty() && accepted && gain;
    json reasons = json::array();
    for (const auto* list : {&regressions, &doubts, &notes}) {
      for (const auto& s : *list)
        reasons.push_back(s);
    }
    if (adopt) {  // first: the decision's one-line reason
      reasons.insert(reasons.begin(),
                     fmt::format("gain CI lower bound {:.1f} % > {:.0f} %, guardrails hold", *lo,
                                 c.min_throughput_gain_pct));
    }
    decisions.push_back(
        {{"arm", arm},
         {"factor", r.value("factor", json(nullptr))},
         {"value", r.value("value", json(nullptr))},
         {"verdict", verdict},
         {"effect_pct", r.value("effect_pct", json(nullptr))},
         {"ci_pct", r.value("ci_pct", json(nullptr))},
         {"base_median", r.value("base_median", json(nullptr))},
         {"arm_median", r.value("arm_median", json(nullptr))},
         {"decision", adopt                              ? "adopt"
                      : outcome == Outcome::inconclusive ? "undecided"
                                                         : "do not adopt"},
         {"outcome", to_string(outcome)},
         {"reason",
          fmt::format("{}: {}", arm, reasons.empty() ? "" : reasons[0].get<std::string>())},
         {"reasons", reasons},
         {"steady_state", steady.counts},
         {"rollback_triggers", adopt ? rollback_triggers(e, r, c, budget) : json::array()}});
  }
  return decisions;
}

json gate_run(const json& analysis, const Criteria& c) {
  // Nothing is compared here, so a broken criterion is a failure of this run, not a regression.
  const auto stall = number_at(analysis, "/classification/stall_fraction");
  const std::string dir = string_at(analysis, "/name");
  if (string_at(analysis, "/status") != "complete") {
    return {{"outcome", "fail"},
            {"reason",
             fmt::format("run {} did not complete ({})", dir, string_at(analysis, "/status"))}};
  }
  if (const json why = value_at(analysis, "/short_why"); why.is_string()) {
    return {{"outcome", "inconclusive"},
            {"reason", fmt::format("run {} measured too little: {}", dir, why.get<std::string>())}};
  }
  if (!stall) {
    return {{"outcome", "inconclusive"},
            {"reason",
             fmt::format("run {} has no end-to-end phase: no stall fraction to gate on", dir)}};
  }
  const bool fails = *stall > c.run_max_stall_fraction;
  return {{"outcome", fails ? "fail" : "pass"},
          {"reason", fmt::format("run {} waits for data {:.1f} % {} {:.0f} %: {} the stall "
                                 "criterion (run.max_stall_fraction)",
                                 dir, 100 * *stall, fails ? ">" : "<=",
                                 100 * c.run_max_stall_fraction, fails ? "fails" : "meets")}};
}

Outcome parse_outcome(const std::string& s) {
  // "fail": a run judged alone broke a criterion; as serious as a regression, named for what it is.
  if (s == "regression" || s == "fail") return Outcome::regression;
  if (s == "inconclusive") return Outcome::inconclusive;
  return Outcome::pass;
}

GateResult gate(const std::vector<json>& items, const Criteria& c) {
  Outcome worst = Outcome::pass;
  const json* first = nullptr;  // the first item with the worst outcome
  for (const auto& item : items) {
    const Outcome o = parse_outcome(item.value("outcome", "pass"));
    if (first == nullptr || o > worst) {
      worst = o;
      first = &item;
    }
  }
  GateResult g;
  g.exit_code = worst == Outcome::regression     ? static_cast<int>(ExitCode::failure)
                : worst == Outcome::inconclusive ? c.inconclusive_exit
                                                 : static_cast<int>(ExitCode::ok);
  g.reason =
      first ? fmt::format("{}: {}", first->value("outcome", "pass"), first->value("reason", ""))
            : "pass: nothing to gate on";
  return g;
}

}  // namespace mmprof::report
