// Inferential statistics of `mmprof ab` against textbook values: t and normal quantiles,
// a hand-computed t-interval, published Wilcoxon critical values, exact small-n p values,
// Lan-DeMets spending, and bootstrap reproducibility by seed.
#include "stats/inference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mmprof::stats {
namespace {

TEST(ExperimentStatsTest, TQuantilesMatchTables) {
  // Student's t table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
  EXPECT_NEAR(t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(t_quantile(0.975, 4), 2.776, 1e-3);
  EXPECT_NEAR(t_quantile(0.975, 10), 2.228, 1e-3);
  EXPECT_NEAR(t_quantile(0.95, 30), 1.697, 1e-3);
  EXPECT_NEAR(t_quantile(0.80, 9), 0.883, 1e-3);
  EXPECT_NEAR(normal_quantile(0.975), 1.95996, 1e-5);
  EXPECT_NEAR(normal_cdf(1.645), 0.95002, 1e-5);
}

TEST(ExperimentStatsTest, TIntervalHandComputed) {
  // {1..5}: mean 3, s = sqrt(2.5), se = s / sqrt(5), half width = 2.776445 * 0.707107.
  const MeanInterval r = t_interval({1, 2, 3, 4, 5}, 0.05);
  EXPECT_EQ(r.n, 5u);
  EXPECT_DOUBLE_EQ(r.mean, 3.0);
  EXPECT_NEAR(r.sd, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(r.half_width, 1.963243, 1e-6);
  EXPECT_NEAR(r.lo, 1.036757, 1e-6);
  EXPECT_NEAR(r.hi, 4.963243, 1e-6);
}

TEST(ExperimentStatsTest, TTestPAtTheCriticalValueIsAlpha) {
  // Two values whose t statistic is t_{0.975, 1} = 12.7062: (1 + b) / (b - 1) = 12.7062.
  const MeanInterval r = t_interval({1.0, 1.1708495661125393}, 0.05);
  EXPECT_NEAR(r.p, 0.05, 1e-9);
  EXPECT_NEAR(r.lo, 0.0, 1e-9);  // the 95% interval just touches zero
}

TEST(ExperimentStatsTest, TIntervalSmallSamplesAreNaN) {
  EXPECT_TRUE(std::isnan(t_interval({}, 0.05).mean));
  const MeanInterval one = t_interval({2.0}, 0.05);
  EXPECT_DOUBLE_EQ(one.mean, 2.0);
  EXPECT_TRUE(std::isnan(one.half_width));
  EXPECT_TRUE(std::isnan(one.p));
}

TEST(ExperimentStatsTest, WilcoxonCriticalValuesMatchPublishedTable) {
  // Two-tailed critical values of T (reject when min(W+, W-) <= T), e.g. Zar, Biostatistical
  // Analysis, table B.12; the same table in most statistics texts.
  const int at05[] = {0, 2, 3, 5, 8, 10, 13, 17, 21, 25, 29, 34, 40, 46, 52};  // n = 6..20
  for (size_t n = 6; n <= 20; ++n)
    EXPECT_EQ(wilcoxon_critical_value(n, 0.05), at05[n - 6]) << "n=" << n;
  EXPECT_EQ(wilcoxon_critical_value(25, 0.05), 89);
  EXPECT_EQ(wilcoxon_critical_value(5, 0.05), -1);  // no test at 5% is possible with n = 5
  EXPECT_EQ(wilcoxon_critical_value(8, 0.01), 0);
  EXPECT_EQ(wilcoxon_critical_value(10, 0.01), 3);
  EXPECT_EQ(wilcoxon_critical_value(20, 0.01), 37);
}

TEST(ExperimentStatsTest, WilcoxonExactSmallSample) {
  // All six differences positive: W+ = 21, P = 2 / 2^6.
  const WilcoxonResult all_up = wilcoxon_signed_rank({0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  EXPECT_TRUE(all_up.exact);
  EXPECT_DOUBLE_EQ(all_up.w_plus, 21);
  EXPECT_NEAR(all_up.p, 2.0 / 64, 1e-12);
  // Zeros are dropped; ranks 1 2 3 4 with W+ = 1 + 3 = 4: P(W+ <= 4) = 7 / 16 (the subsets {},
  // {1}, {2}, {3}, {4}, {1,2}, {1,3}), two-sided p = 14 / 16.
  const WilcoxonResult sym = wilcoxon_signed_rank({0, 1, -1.5, 2, -2.5, 0});
  EXPECT_EQ(sym.n, 4u);
  EXPECT_DOUBLE_EQ(sym.w_plus, 4);
  EXPECT_NEAR(sym.p, 14.0 / 16, 1e-12);
}

TEST(ExperimentStatsTest, WilcoxonNormalApproximationWithTies) {
  // |d| mid ranks 1.5 1.5 4 4 4 6 7 8 9 10; negatives at ranks 1.5 and 9: W+ = 44.5.
  // var = 10*11*21/24 - (2^3-2)/48 - (3^3-3)/48 = 95.625; z = (|44.5 - 27.5| - 0.5) / sqrt(var).
  const WilcoxonResult r = wilcoxon_signed_rank({1, -1, 2, 2, 2, 3, 4, 5, -6, 7});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.w_plus, 44.5);
  EXPECT_NEAR(r.p, 0.0915412654889769, 1e-9);
}

TEST(ExperimentStatsTest, SpearmanTrendExactP) {
  const Trend up = spearman_trend({1, 2, 3, 4, 5});
  EXPECT_NEAR(up.rho, 1.0, 1e-12);
  EXPECT_NEAR(up.p, 2.0 / 120, 1e-12);  // only the two monotone orders of 5! are as extreme
  // One adjacent swap: rho = 1 - 6*2/120 = 0.9; |rho| >= 0.9 for 2 x (1 + 4) of 120 orders.
  const Trend swap = spearman_trend({1, 3, 2, 4, 5});
  EXPECT_NEAR(swap.rho, 0.9, 1e-12);
  EXPECT_NEAR(swap.p, 10.0 / 120, 1e-12);
  const Trend flat = spearman_trend({3, 3, 3, 3});
  EXPECT_NEAR(flat.rho, 0.0, 1e-12);
  EXPECT_NEAR(flat.p, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(spearman_trend({1, 2}).rho));
}

TEST(ExperimentStatsTest, SpearmanTrendLargeSampleUsesT) {
  std::vector<double> down;
  for (int i = 0; i < 12; ++i)
    down.push_back(100.0 - i);
  const Trend r = spearman_trend(down);
  EXPECT_NEAR(r.rho, -1.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.p, 0.0);
}

TEST(ExperimentStatsTest, ObrienFlemingSpending) {
  EXPECT_NEAR(obf_alpha_spent(1.0, 0.05), 0.05, 1e-12);
  // Two equally spaced looks: 0.0056 spent at t = 0.5 (Jennison & Turnbull 2000, table 7.6).
  EXPECT_NEAR(obf_alpha_spent(0.5, 0.05), 0.005574596680784527, 1e-9);
  EXPECT_DOUBLE_EQ(obf_alpha_spent(0.0, 0.05), 0.0);
  EXPECT_LT(obf_alpha_spent(0.25, 0.05), obf_alpha_spent(0.5, 0.05));
}

TEST(ExperimentStatsTest, MinimumDetectableEffect) {
  // (t_{0.975,9} + t_{0.8,9}) * 1 / sqrt(10) = (2.262 + 0.883) / 3.1623 from the t table.
  EXPECT_NEAR(min_detectable_effect(1.0, 10, 0.05, 0.8), (2.262 + 0.883) / std::sqrt(10.0), 5e-4);
  EXPECT_TRUE(std::isnan(min_detectable_effect(1.0, 1, 0.05, 0.8)));
}

TEST(ExperimentStatsTest, BootstrapIsReproducibleBySeed) {
  const std::vector<double> d = {0.01, -0.02, 0.03, 0.05, 0.00, 0.02, -0.01, 0.04};
  const Interval a = bootstrap_mean_ci(d, 0.05, 10000, 42);
  const Interval b = bootstrap_mean_ci(d, 0.05, 10000, 42);
  const Interval c = bootstrap_mean_ci(d, 0.05, 10000, 43);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_TRUE(a.lo != c.lo || a.hi != c.hi);
  // The percentile interval of the mean lies inside the data's range and around its mean, and
  // is close to (slightly narrower than) the t-interval for this near-symmetric sample.
  const MeanInterval t = t_interval(d, 0.05);
  EXPECT_LT(a.lo, t.mean);
  EXPECT_GT(a.hi, t.mean);
  EXPECT_NEAR(a.lo, t.lo, 0.5 * t.half_width);
  EXPECT_NEAR(a.hi, t.hi, 0.5 * t.half_width);
  const Interval constant = bootstrap_mean_ci({2, 2, 2}, 0.05, 1000, 1);
  EXPECT_DOUBLE_EQ(constant.lo, 2.0);
  EXPECT_DOUBLE_EQ(constant.hi, 2.0);
}

// The ratio of two p99s: constant sides give the exact ratio in every resample; a scaled copy of
// a sample has a ratio interval that holds the scale (each side's p99 varies alone, so the interval
// is wide but straddles it); same seed, same interval; an empty side or a base p99 of 0 is NaN.
TEST(ExperimentStatsTest, BootstrapQuantileRatio) {
  const Interval exact = bootstrap_quantile_ratio_ci(
      std::vector<double>(200, 10.0), std::vector<double>(150, 12.5), 0.99, 0.05, 500, 1);
  EXPECT_DOUBLE_EQ(exact.lo, 1.25);
  EXPECT_DOUBLE_EQ(exact.hi, 1.25);
  std::vector<double> a, b;
  for (int i = 1; i <= 1000; ++i) {
    a.push_back(i);
    b.push_back(2.0 * i);
  }
  const Interval scaled = bootstrap_quantile_ratio_ci(a, b, 0.99, 0.05, 2000, 7);
  EXPECT_LT(scaled.lo, 2.0);
  EXPECT_GT(scaled.hi, 2.0);
  EXPECT_GT(scaled.lo, 1.9);  // p99 of 1000 values moves by a few ranks, about 1 %
  EXPECT_LT(scaled.hi, 2.1);
  const Interval again = bootstrap_quantile_ratio_ci(a, b, 0.99, 0.05, 2000, 7);
  EXPECT_EQ(scaled.lo, again.lo);
  EXPECT_EQ(scaled.hi, again.hi);
  EXPECT_TRUE(std::isnan(bootstrap_quantile_ratio_ci({}, b, 0.99, 0.05, 100, 1).lo));
  EXPECT_TRUE(std::isnan(
      bootstrap_quantile_ratio_ci(std::vector<double>(100, 0.0), b, 0.99, 0.05, 100, 1).lo));
}

}  // namespace
// a = {1,2,3,4}, b = {2,3,4,5}: difference 1, se = sqrt(2 x (5/3)/4) = 0.9128709, Welch df = 6,
// t(0.975, 6) = 2.446912.
// Order-statistic CIs of the median against Conover's table (k-th smallest to k-th largest):
// n = 6, the range at 1 - 2/64; n = 20, x(6)..x(15) at 1 - 2 P(Bin(20, .5) <= 5) = 0.9586.
TEST(StatsMedianInterval, OrderStatisticsMatchTheBinomialTable) {
  const MedianInterval six = median_interval({6, 1, 5, 2, 4, 3}, 0.05);
  EXPECT_EQ(six.lo, 1);
  EXPECT_EQ(six.hi, 6);
  EXPECT_NEAR(six.coverage, 1 - 2.0 / 64, 1e-12);
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i)
    twenty.push_back(i);
  const MedianInterval t = median_interval(twenty, 0.05);
  EXPECT_EQ(t.lo, 6);
  EXPECT_EQ(t.hi, 15);
  EXPECT_NEAR(t.coverage, 0.958610534667969, 1e-9);
  // Too few for 95 %: the range, with the coverage it has.
  const MedianInterval five = median_interval({1, 2, 3, 4, 5}, 0.05);
  EXPECT_EQ(five.lo, 1);
  EXPECT_EQ(five.hi, 5);
  EXPECT_NEAR(five.coverage, 1 - 2.0 / 32, 1e-12);
  EXPECT_TRUE(std::isnan(median_interval({}, 0.05).lo));
}

TEST(StatsWelch, IntervalByHandAndSmallSamples) {
  const auto ci = welch_interval({1, 2, 3, 4}, {2, 3, 4, 5}, 0.05);
  ASSERT_TRUE(ci.has_value());
  EXPECT_DOUBLE_EQ(ci->difference, 1.0);
  EXPECT_NEAR(ci->lo, 1 - 2.446912 * 0.9128709, 1e-5);
  EXPECT_NEAR(ci->hi, 1 + 2.446912 * 0.9128709, 1e-5);
  const auto flat = welch_interval({2, 2}, {3, 3, 3}, 0.05);
  ASSERT_TRUE(flat.has_value());
  EXPECT_DOUBLE_EQ(flat->lo, 1.0);
  EXPECT_DOUBLE_EQ(flat->hi, 1.0);
  EXPECT_FALSE(welch_interval({1}, {2, 3}, 0.05).has_value());
}

}  // namespace mmprof::stats
