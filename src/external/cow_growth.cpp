#include "external/cow_growth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/inference.hpp"

namespace mmprof::external {

std::vector<UssPoint> uss_series(const std::vector<ResourceRow>& rows, int pid, int64_t t_begin_ns,
                                 int64_t t_end_ns) {
  std::vector<UssPoint> out;
  for (const ResourceRow& r : rows) {
    if (r.pid != pid || !r.uss_kb || r.t_ns < t_begin_ns || r.t_ns > t_end_ns) continue;
    out.push_back({r.t_ns, *r.uss_kb});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const UssPoint& a, const UssPoint& b) { return a.t_ns < b.t_ns; });
  return out;
}

CowGrowth cow_growth(int pid, const std::vector<UssPoint>& series, double threshold_mib_per_min) {
  CowGrowth g;
  g.pid = pid;
  g.points = static_cast<int64_t>(series.size());
  g.threshold_mib_per_min = threshold_mib_per_min;
  if (series.size() < 2) {
    g.verdict = "too few USS samples for a slope";
    return g;
  }
  g.span_s = static_cast<double>(series.back().t_ns - series.front().t_ns) / 1e9;
  const auto n = static_cast<double>(series.size());
  double tm = 0, ym = 0;
  for (const UssPoint& p : series) {
    tm += static_cast<double>(p.t_ns - series.front().t_ns) / 60e9;
    ym += static_cast<double>(p.uss_kb) / 1024.0;
  }
  tm /= n;
  ym /= n;
  double sxx = 0, sxy = 0;
  for (const UssPoint& p : series) {
    const double dt = static_cast<double>(p.t_ns - series.front().t_ns) / 60e9 - tm;
    sxx += dt * dt;
    sxy += dt * (static_cast<double>(p.uss_kb) / 1024.0 - ym);
  }
  if (sxx <= 0) {
    g.verdict = "every USS sample at the same instant: no slope";
    return g;
  }
  const double slope = sxy / sxx;
  g.slope_mib_per_min = slope;
  g.growth_mib = slope * g.span_s / 60.0;
  if (series.size() >= 3) {
    double ss = 0;
    for (const UssPoint& p : series) {
      const double dt = static_cast<double>(p.t_ns - series.front().t_ns) / 60e9 - tm;
      const double r = static_cast<double>(p.uss_kb) / 1024.0 - (ym + slope * dt);
      ss += r * r;
    }
    const double se = std::sqrt(ss / (n - 2) / sxx);
    const double q = stats::t_quantile(0.975, n - 2);
    g.slope_ci95_low_mib_per_min = slope - q * se;
    g.slope_ci95_high_mib_per_min = slope + q * se;
  }
  if (series.size() < kCowMinPoints || g.span_s < kCowMinSpanS) {
    g.verdict = fmt::format(
        "too short to tell: {} USS samples over {:.0f} s (at least {} over {:.0f} s are needed)",
        series.size(), g.span_s, kCowMinPoints, kCowMinSpanS);
    return g;
  }
  g.growing = slope > threshold_mib_per_min && g.slope_ci95_low_mib_per_min.value_or(0) > 0;
  if (g.growing) {
    g.verdict = fmt::format(
        "USS grows {:.1f} MiB/min (95% CI {:.1f} to {:.1f}) over {:.0f} s, above {:g} MiB/min: "
        "copy-on-write of the dataset's Python objects, whose refcounts the worker touches "
        "(PyTorch issue #13246); hold per-sample metadata in numpy arrays or one bytes buffer, "
        "not in lists or dicts of Python objects",
        slope, *g.slope_ci95_low_mib_per_min, *g.slope_ci95_high_mib_per_min, g.span_s,
        threshold_mib_per_min);
  } else {
    g.verdict = fmt::format("no copy-on-write growth: USS changes {:.1f} MiB/min over {:.0f} s",
                            slope, g.span_s);
  }
  return g;
}

}  // namespace mmprof::external
