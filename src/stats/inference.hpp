#pragma once
// Inferential statistics for A/B experiments: pure functions over std::vector<double> with
// defined small-n behaviour (google/benchmark's statistics.cc style). Randomness (the bootstrap)
// takes an explicit seed, so every result is reproducible.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace mmprof::stats {

// Quantiles through Boost.Math: Student's t with `df` degrees of freedom, and the standard normal.
double t_quantile(double p, double df);
double normal_quantile(double p);
double normal_cdf(double z);

// Mean of `values` with a two-sided (1 - alpha) Student-t interval and the one-sample t test of
// mean == 0. With fewer than 2 values the interval and p are NaN.
struct MeanInterval {
  size_t n = 0;
  double mean = 0, sd = 0, half_width = 0, lo = 0, hi = 0;
  double p = 0;  // two-sided p of H0: mean == 0
};
MeanInterval t_interval(const std::vector<double>& values, double alpha);

// Welch's two-sample t interval of mean(b) - mean(a) (unequal variances; Welch-Satterthwaite
// degrees of freedom). Empty with fewer than 2 values on a side; with zero spread on both sides
// the interval is the difference itself.
struct DifferenceInterval {
  double difference = 0, lo = 0, hi = 0;
};
std::optional<DifferenceInterval> welch_interval(const std::vector<double>& a,
                                                 const std::vector<double>& b, double alpha);

// Percentile bootstrap CI of the mean (Efron & Tibshirani 1993, ch. 13): `resamples` resamples
// with replacement drawn from Rng(seed). Same inputs and seed, same interval. NaN when empty.
struct Interval {
  double lo = 0, hi = 0;
};
Interval bootstrap_mean_ci(const std::vector<double>& values, double alpha, int resamples,
                           uint64_t seed);
// Percentile bootstrap CI of quantile(b, q) / quantile(a, q) (quantile_sorted's interpolation):
// each resample draws a and b independently, with replacement, from Rng(seed). A high quantile is
// estimable only with values beyond it: callers require n >= 1 / (1 - q) on each side. NaN when
// a side is empty or a resample's quantile of `a` is not positive.
Interval bootstrap_quantile_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                                     double q, double alpha, int resamples, uint64_t seed);

// Distribution-free CI of the median (order statistics, Conover, Practical Nonparametric
// Statistics, 3rd ed., 3.2): the k-th smallest and k-th largest value, k the largest with
// P(k <= Binomial(n, 1/2) <= n - k) >= 1 - alpha; `coverage` is that probability. Below n = 6
// no k reaches 95 %: the interval is then the range, with its smaller coverage. NaN when empty.
struct MedianInterval {
  double lo = 0, hi = 0, coverage = 0;
};
MedianInterval median_interval(std::vector<double> values, double alpha);

// Wilcoxon signed-rank test of H0: median == 0 (zeros dropped, Wilcoxon's method; ties get mid
// ranks). Exact null distribution when n <= 25 and there are no ties among |values|; otherwise
// the normal approximation with tie-corrected variance and a continuity correction.
struct WilcoxonResult {
  size_t n = 0;       // non-zero values
  double w_plus = 0;  // sum of the ranks of the positive values
  double p = 1;       // two-sided
  bool exact = false;
};
WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& values);
// P(W+ <= w) under H0 for n untied non-zero values (exact distribution, any n <= 60).
double wilcoxon_exact_cdf(size_t n, double w);
// The largest T with P(min(W+, W-) <= T) <= alpha (two-sided), as in published critical-value
// tables; -1 when no T qualifies (n too small).
int wilcoxon_critical_value(size_t n, double alpha_two_sided);

// Spearman rank correlation of `values` with their order 0, 1, ..., n-1: a monotone trend test.
// p is exact (all permutations) for n <= 8, else the t approximation with n-2 df. NaN for n < 3.
struct Trend {
  size_t n = 0;
  double rho = 0, p = 1;
};
Trend spearman_trend(const std::vector<double>& values);

// Lan-DeMets alpha spending with the O'Brien-Fleming-type function (Lan & DeMets, Biometrika
// 70(3), 1983): alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)) for information fraction t in (0, 1].
double obf_alpha_spent(double t, double alpha);

// Minimum detectable mean of a paired difference with standard deviation `sd` over n pairs:
// (t_{1-alpha/2, n-1} + t_{power, n-1}) sd / sqrt(n) (two-sided test, given power).
double min_detectable_effect(double sd, size_t n, double alpha, double power);

}  // namespace mmprof::stats
