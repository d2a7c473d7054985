#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mmprof {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double h = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double sum(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return sum(values) / static_cast<double>(values.size());
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional(v) : std::nullopt;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

Distribution describe(std::vector<double> values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = mean(values);
  d.p50 = quantile_sorted(values, 0.50);
  d.p90 = quantile_sorted(values, 0.90);
  d.p99 = quantile_sorted(values, 0.99);
  d.p999 = quantile_sorted(values, 0.999);
  d.min = values.front();
  d.max = values.back();
  return d;
}

nlohmann::json to_json(const Distribution& d, bool with_p999) {
  auto v = [&](double x) { return d.count == 0 ? nlohmann::json(nullptr) : nlohmann::json(x); };
  nlohmann::json j = {{"count", d.count}, {"mean", v(d.mean)}, {"p50", v(d.p50)},
                      {"p90", v(d.p90)},  {"p99", v(d.p99)},   {"max", v(d.max)}};
  if (with_p999) j["p999"] = v(d.p999);
  return j;
}

}  // namespace mmprof
