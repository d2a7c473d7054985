#include "stats/inference.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "stats/descriptive.hpp"
#include "util/rng.hpp"

namespace mmprof::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mid ranks (1-based) of `v`: tied values share the average of their ranks.
std::vector<double> mid_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
      ++j;
    const double rank = static_cast<double>(i + j) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k)
      ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = mmprof::mean(x), my = mmprof::mean(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx == 0 || syy == 0 ? 0.0 : sxy / std::sqrt(sxx * syy);
}

// Number of subsets of {1..n} for each rank sum: the exact null distribution of W+.
std::vector<double> wilcoxon_counts(size_t n) {
  const size_t max_sum = n * (n + 1) / 2;
  std::vector<double> counts(max_sum + 1, 0.0);
  counts[0] = 1;
  for (size_t r = 1; r <= n; ++r) {
    for (size_t s = max_sum; s >= r; --s)
      counts[s] += counts[s - r];
  }
  return counts;
}

}  // namespace

double t_quantile(double p, double df) {
  return boost::math::quantile(boost::math::students_t(df), p);
}

double normal_quantile(double p) {
  return boost::math::quantile(boost::math::normal(), p);
}

double normal_cdf(double z) {
  return boost::math::cdf(boost::math::normal(), z);
}

std::optional<DifferenceInterval> welch_interval(const std::vector<double>& a,
                                                 const std::vector<double>& b, double alpha) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const auto mean_and_se2 = [](const std::vector<double>& v) {
    const double m = mmprof::mean(v);
    double ss = 0;
    for (double x : v)
      ss += (x - m) * (x - m);
    const double n = static_cast<double>(v.size());
    return std::pair{m, ss / (n - 1) / n};
  };
  const auto [ma, va] = mean_and_se2(a);
  const auto [mb, vb] = mean_and_se2(b);
  DifferenceInterval r{mb - ma, mb - ma, mb - ma};
  const double se = std::sqrt(va + vb);
  if (se == 0) return r;
  const double df =
      (va + vb) * (va + vb) /
      (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  const double half = t_quantile(1 - alpha / 2, df) * se;
  r.lo = r.difference - half;
  r.hi = r.difference + half;
  return r;
}

MeanInterval t_interval(const std::vector<double>& values, double alpha) {
  MeanInterval r;
  r.n = values.size();
  r.mean = r.n == 0 ? kNaN : mmprof::mean(values);
  if (r.n < 2) {
    r.sd = r.half_width = r.lo = r.hi = r.p = kNaN;
    return r;
  }
  double ss = 0;
  for (double v : values)
    ss += (v - r.mean) * (v - r.mean);
  const double df = static_cast<double>(r.n - 1);
  r.sd = std::sqrt(ss / df);
  const double se = r.sd / std::sqrt(static_cast<double>(r.n));
  r.half_width = t_quantile(1 - alpha / 2, df) * se;
  r.lo = r.mean - r.half_width;
  r.hi = r.mean + r.half_width;
  if (se == 0) {
    r.p = r.mean == 0 ? 1.0 : 0.0;
  } else {
    r.p = 2 * boost::math::cdf(
                  boost::math::complement(boost::math::students_t(df), std::fabs(r.mean) / se));
  }
  return r;
}

Interval bootstrap_mean_ci(const std::vector<double>& values, double alpha, int resamples,
                           uint64_t seed) {
  if (values.empty() || resamples < 1) return {kNaN, kNaN};
  Rng rng(seed);
  const auto n = static_cast<int64_t>(values.size());
  std::vector<double> means(static_cast<size_t>(resamples));
  for (auto& m : means) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += values[static_cast<size_t>(rng.range(0, n - 1))];
    m = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  return {quantile_sorted(means, alpha / 2), quantile_sorted(means, 1 - alpha / 2)};
}

namespace {

// The q-quantile of a resample (with replacement) of `values`, into `scratch`.
double resampled_quantile(const std::vector<double>& values, double q, Rng& rng,
                          std::vector<double>& scratch) {
  const auto n = static_cast<int64_t>(values.size());
  scratch.resize(values.size());
  for (double& v : scratch)
    v = values[static_cast<size_t>(rng.range(0, n - 1))];
  std::sort(scratch.begin(), scratch.end());
  return quantile_sorted(scratch, q);
}

}  // namespace

Interval bootstrap_quantile_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                                     double q, double alpha, int resamples, uint64_t seed) {
  if (a.empty() || b.empty() || resamples < 1) return {kNaN, kNaN};
  Rng rng(seed);
  std::vector<double> ratios(static_cast<size_t>(resamples)), scratch;
  for (double& r : ratios) {
    const double qa = resampled_quantile(a, q, rng, scratch);
    const double qb = resampled_quantile(b, q, rng, scratch);
    if (!(qa > 0)) return {kNaN, kNaN};
    r = qb / qa;
  }
  std::sort(ratios.begin(), ratios.end());
  return {quantile_sorted(ratios, alpha / 2), quantile_sorted(ratios, 1 - alpha / 2)};
}

double wilcoxon_exact_cdf(size_t n, double w) {
  const std::vector<double> counts = wilcoxon_counts(n);
  const double total = std::ldexp(1.0, static_cast<int>(n));
  double below = 0;
  for (size_t s = 0; s < counts.size() && static_cast<double>(s) <= w + 1e-9; ++s)
    below += counts[s];
  return below / total;
}

int wilcoxon_critical_value(size_t n, double alpha_two_sided) {
  int critical = -1;
  const auto max_sum = static_cast<int>(n * (n + 1) / 2);
  for (int t = 0; t <= max_sum / 2; ++t) {
    if (2 * wilcoxon_exact_cdf(n, t) > alpha_two_sided) break;
    critical = t;
  }
  return critical;
}

MedianInterval median_interval(std::vector<double> values, double alpha) {
  const size_t n = values.size();
  if (n == 0) return {std::nan(""), std::nan(""), std::nan("")};
  std::sort(values.begin(), values.end());
  // P(Binomial(n, 1/2) < k) for k = 1, 2, ...: the mass below the k-th order statistic.
  const auto below = [n](size_t k) {
    double p = 0;
    for (size_t j = 0; j < k; ++j) {
      p += std::exp(std::lgamma(static_cast<double>(n) + 1) -
                    std::lgamma(static_cast<double>(j) + 1) -
                    std::lgamma(static_cast<double>(n - j) + 1) - static_cast<double>(n) * M_LN2);
    }
    return p;
  };
  size_t k = 1;
  while (2 * (k + 1) <= n + 1 && 1 - 2 * below(k + 1) >= 1 - alpha)
    ++k;
  return {values[k - 1], values[n - k], 1 - 2 * below(k)};
}

WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& values) {
  std::vector<double> abs_values, signs;
  for (double v : values) {
    if (v == 0) continue;
    abs_values.push_back(std::fabs(v));
    signs.push_back(v > 0 ? 1 : -1);
  }
  WilcoxonResult r;
  r.n = abs_values.size();
  if (r.n == 0) return r;
  const std::vector<double> ranks = mid_ranks(abs_values);
  for (size_t i = 0; i < r.n; ++i)
    if (signs[i] > 0) r.w_plus += ranks[i];
  std::vector<double> sorted = abs_values;
  std::sort(sorted.begin(), sorted.end());
  const bool ties = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  const auto n = static_cast<double>(r.n);
  const double expected = n * (n + 1) / 4;
  if (r.n <= 25 && !ties) {
    r.exact = true;
    const double w_min = std::min(r.w_plus, n * (n + 1) / 2 - r.w_plus);
    r.p = std::min(1.0, 2 * wilcoxon_exact_cdf(r.n, w_min));
    return r;
  }
  // Tie correction: each group of t tied ranks lowers the variance by (t^3 - t) / 48.
  double tie_term = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i])
      ++j;
    const auto t = static_cast<double>(j - i);
    tie_term += (t * t * t - t) / 48;
    i = j;
  }
  const double sd = std::sqrt(n * (n + 1) * (2 * n + 1) / 24 - tie_term);
  const double diff = r.w_plus - expected;
  const double corrected = std::max(0.0, std::fabs(diff) - 0.5);
  r.p = sd == 0 ? 1.0 : std::min(1.0, 2 * (1 - normal_cdf(corrected / sd)));
  return r;
}

Trend spearman_trend(const std::vector<double>& values) {
  Trend r;
  r.n = values.size();
  if (r.n < 3) return {r.n, kNaN, kNaN};
  std::vector<double> x(r.n);
  std::iota(x.begin(), x.end(), 1.0);
  const std::vector<double> y = mid_ranks(values);
  r.rho = pearson(x, y);
  if (r.n <= 8) {
    // Exact permutation p: how many orderings of the observed ranks correlate at least as
    // strongly with time (ties are kept as they are, so the test stays exact with ties).
    std::vector<double> perm = y;
    std::sort(perm.begin(), perm.end());
    size_t extreme = 0, total = 0;
    do {
      ++total;
      if (std::fabs(pearson(x, perm)) >= std::fabs(r.rho) - 1e-12) ++extreme;
    } while (std::next_permutation(perm.begin(), perm.end()));
    r.p = static_cast<double>(extreme) / static_cast<double>(total);
    return r;
  }
  const double df = static_cast<double>(r.n - 2);
  if (std::fabs(r.rho) >= 1) {
    r.p = 0;
    return r;
  }
  const double t = r.rho * std::sqrt(df / (1 - r.rho * r.rho));
  r.p = 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::fabs(t)));
  return r;
}

double obf_alpha_spent(double t, double alpha) {
  if (t <= 0) return 0;
  t = std::min(t, 1.0);
  return 2 - 2 * normal_cdf(normal_quantile(1 - alpha / 2) / std::sqrt(t));
}

double min_detectable_effect(double sd, size_t n, double alpha, double power) {
  if (n < 2 || !std::isfinite(sd)) return kNaN;
  const double df = static_cast<double>(n - 1);
  return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * sd /
         std::sqrt(static_cast<double>(n));
}

}  // namespace mmprof::stats
