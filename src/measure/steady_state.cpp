#include "measure/steady_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/inference.hpp"

namespace mmprof {

SteadyCriteria steady_criteria(const Config& config) {
  SteadyCriteria c;
  c.blocks = config.phases.steady_blocks;
  c.block_steps = std::max(4, config.loader.num_workers * config.loader.prefetch_factor);
  return c;
}

BlockJudgement judge_blocks(const std::vector<double>& rates, const SteadyCriteria& c) {
  BlockJudgement j;
  const stats::MeanInterval m = stats::t_interval(rates, 0.05);
  j.cv = m.mean > 0 ? m.sd / m.mean : NAN;
  const stats::Trend trend = stats::spearman_trend(rates);
  j.rho = trend.rho;
  j.p = trend.p;
  if (rates.size() < 3) {
    j.reason = fmt::format("only {} blocks, too few to judge", rates.size());
  } else if (!(j.cv <= c.cv_max)) {
    j.reason = fmt::format("block throughput CV {:.3f} above {:.2f}", j.cv, c.cv_max);
  } else if (trend.p < c.trend_p) {
    j.reason = fmt::format("block throughput trends (Spearman rho {:+.2f}, p {:.3f})", j.rho, j.p);
  } else {
    j.steady = true;
  }
  return j;
}

SteadyState settle(const SteadyCriteria& c, const std::function<void()>& step,
                   const std::function<int64_t()>& now_ns) {
  SteadyState s;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<double> rates;
    for (int b = 0; b < c.blocks; ++b) {
      const int64_t t0 = now_ns();
      for (int i = 0; i < c.block_steps; ++i)
        step();
      const double seconds = static_cast<double>(now_ns() - t0) / 1e9;
      rates.push_back(seconds > 0 ? c.block_steps / seconds : INFINITY);
    }
    s.attempts.push_back(rates);
    s.last = judge_blocks(rates, c);
    s.steady = s.last.steady;
    s.extended = attempt > 0;
    if (s.steady) break;
  }
  return s;
}

nlohmann::json to_json(const SteadyState& s, const SteadyCriteria& c) {
  return {
      {"steady", s.steady},
      {"extended", s.extended},
      {"reason", s.last.reason},
      {"cv", std::isfinite(s.last.cv) ? nlohmann::json(s.last.cv) : nlohmann::json()},
      {"spearman_rho", std::isfinite(s.last.rho) ? nlohmann::json(s.last.rho) : nlohmann::json()},
      {"spearman_p", std::isfinite(s.last.p) ? nlohmann::json(s.last.p) : nlohmann::json()},
      {"block_steps", c.block_steps},
      {"blocks", c.blocks},
      {"cv_max", c.cv_max},
      {"trend_p", c.trend_p},
      {"block_steps_per_s", s.attempts}};
}

}  // namespace mmprof
