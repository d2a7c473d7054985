#pragma once
// The steady-state check that follows a phase's warm-up when phases.steady_blocks > 0 (set by
// `mmprof ab`): throughput is measured over consecutive blocks of steps; the phase counts as
// steady when the blocks' coefficient of variation is small and they show no monotone trend
// (Spearman over the block order). If not, the check is repeated once (the warm-up extended);
// a phase still not steady is flagged, not dropped. The result goes to the run's steady.json.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/config.hpp"

namespace mmprof {

struct SteadyCriteria {
  int blocks = 5;
  int block_steps = 4;
  double cv_max = 0.10;   // block throughput: sd / mean
  double trend_p = 0.05;  // Spearman trend over blocks, two-sided
};

// blocks = phases.steady_blocks; block_steps = max(4, num_workers x prefetch_factor), so a block
// spans at least one turn of the prefetch ring.
SteadyCriteria steady_criteria(const Config& config);

struct BlockJudgement {
  bool steady = false;
  double cv = 0, rho = 0, p = 1;
  std::string reason;  // why not steady ("" when steady)
};

// Pure: judges block throughputs (any unit; higher is faster) against the criteria.
BlockJudgement judge_blocks(const std::vector<double>& rates, const SteadyCriteria& c);

struct SteadyState {
  bool steady = false;
  bool extended = false;                      // the first check failed and a second one ran
  std::vector<std::vector<double>> attempts;  // block rates (steps/s) of each check
  BlockJudgement last;
};

// Runs `step` (one warm-up step) blocks x block_steps times per check, timing blocks with
// `now_ns`; at most two checks.
SteadyState settle(const SteadyCriteria& c, const std::function<void()>& step,
                   const std::function<int64_t()>& now_ns);

nlohmann::json to_json(const SteadyState& s, const SteadyCriteria& c);

}  // namespace mmprof
