#pragma once
// Adopt / rollback criteria (configs/report/criteria.yaml, or --gate FILE) and their application:
// to `mmprof ab` verdicts (adopt or not per change, rollback triggers for what is adopted), to
// two runs (--compare BASE NEW) and to a run alone. Pure functions of the inputs' JSON.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "report/inputs.hpp"

namespace mmprof::report {

struct Criteria {
  std::vector<std::string> accepted_verdicts = {"ADOPT"};
  double min_throughput_gain_pct = 3;
  double max_p99_regression_pct = 10;
  std::optional<double> memory_budget_mib;   // peak total PSS; null: the share below
  double memory_budget_host_fraction = 0.8;  // of the host's RAM (the manifest's MemTotal)
  bool require_correctness = true;
  double compare_max_throughput_drop_pct = 5;
  double compare_max_p99_regression_pct = 10;
  double compare_max_memory_growth_pct = 20;
  double run_max_stall_fraction = 0.20;
  std::string rollback_window = "15m";
  double rollback_throughput_drop_pct = 5;
  double rollback_p99_regression_pct = 10;
  int inconclusive_exit = static_cast<int>(ExitCode::inconclusive);  // 0, 1 or 5
  nlohmann::json source;  // the file as JSON, echoed into report.json
};

// Missing keys keep the defaults above; a wrong type or unknown key is a UsageError naming
// `name` and the key.
Criteria parse_criteria(const std::string& yaml_text, const std::string& name);

// Outcomes, worst last: pass < inconclusive < regression. parse_outcome also reads "fail" (a run
// judged alone, docs/report.md) as a regression.
enum class Outcome { pass, inconclusive, regression };
const char* to_string(Outcome o) noexcept;
Outcome parse_outcome(const std::string& s);

// The memory budget (MiB of peak total PSS): memory_budget_mib when set, else
// memory_budget_host_fraction of `host_memory_mib` (a manifest's hardware.memory.total_mib);
// nullopt when neither is known.
std::optional<double> memory_budget(const Criteria& c, std::optional<double> host_memory_mib);

// Per factor arm of an experiment: {arm, factor, value, verdict, effect_pct, ci_pct, decision
// ("adopt" | "do not adopt" | "undecided"), outcome, reasons[], steady_state{...},
// rollback_triggers[]}. `host_memory_mib`: the RAM of the host the trials ran on, for the default
// memory budget. Trials that never reached steady state are stated; a verdict ab decided on
// mostly non-steady trials of the arm or the base (experiment files from before ab withheld such
// verdicts) is undecided.
nlohmann::json decide_experiment(const nlohmann::json& experiment, const Criteria& c,
                                 std::optional<double> host_memory_mib = std::nullopt);

// Two runs: {metric, rows[{name, base, new, change_pct, limit_pct, outcome}], step_time_ci_pct,
// outcome, reason}.
nlohmann::json compare_runs(const RunData& base, const RunData& next, const Criteria& c);

// Welch's two-sample t interval (95 %) of mean(b) - mean(a) in percent of mean(a); nullopt
// with fewer than 2 values on a side.
std::optional<std::pair<double, double>> welch_change_pct(const std::vector<double>& a,
                                                          const std::vector<double>& b);

// A run alone: {outcome, reason} (its stall fraction against run.max_stall_fraction). Nothing is
// compared, so the outcome is "fail" (read as a regression by parse_outcome), "inconclusive" or
// "pass", and the reason names the criterion: "... waits for data 58.5 % > 20 %: fails the stall
// criterion (run.max_stall_fraction)".
nlohmann::json gate_run(const nlohmann::json& analysis, const Criteria& c);

struct GateResult {
  int exit_code = 0;
  std::string reason;
};
// The worst outcome among `items` (each {outcome, reason}): 0 pass, 1 regression, else
// c.inconclusive_exit (5 unless the criteria say 0 or 1); the reason is the first worst item's.
GateResult gate(const std::vector<nlohmann::json>& items, const Criteria& c);

}  // namespace mmprof::report
