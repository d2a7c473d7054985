#pragma once
// Descriptive statistics as pure functions over samples (google/benchmark's statistics.cc style):
// exact order statistics, never averages dressed as percentiles.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace mmprof {

// The q-quantile (0 <= q <= 1) of `sorted` (ascending) by linear interpolation between closest
// ranks (Hyndman & Fan type 7, numpy's default). NaN for an empty input.
double quantile_sorted(const std::vector<double>& sorted, double q);

double sum(const std::vector<double>& values);
double mean(const std::vector<double>& values);
// quantile_sorted(sorted copy, 0.5): the middle value, or the mean of the two middle ones.
double median(std::vector<double> values);

struct Distribution {
  size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, min = 0;
};

// Sorts a copy; an empty input gives count 0 (written as nulls).
Distribution describe(std::vector<double> values);

// `v` as a JSON number, or null when it is NaN or infinite (which JSON cannot hold).
nlohmann::json finite_or_null(double v);
// `v`, or empty ("not measured") when it is NaN (no data) or infinite.
std::optional<double> finite(double v);

// {"count", "mean", "p50", "p90", "p99", "p999", "max"}; values null when count == 0.
nlohmann::json to_json(const Distribution& d, bool with_p999 = true);

}  // namespace mmprof
