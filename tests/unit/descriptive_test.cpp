// Descriptive statistics: exact values against numpy's default quantile (Hyndman & Fan type 7).
#include "stats/descriptive.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "util/rng.hpp"

namespace mmprof {
namespace {

constexpr double kTol = 1e-12;

TEST(StatsTest, QuantileMatchesNumpyOnFourValues) {
  const std::vector<double> v = {1, 2, 3, 4};
  // numpy.quantile([1, 2, 3, 4], q) for these q.
  EXPECT_NEAR(quantile_sorted(v, 0.0), 1.0, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.25), 1.75, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.5), 2.5, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.9), 3.7, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.99), 3.97, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.999), 3.997, kTol);
  EXPECT_NEAR(quantile_sorted(v, 1.0), 4.0, kTol);
}

TEST(StatsTest, QuantileMatchesNumpyOnUnevenValues) {
  const std::vector<double> v = {0.5, 1.0, 10.0, 10.0, 100.0};
  // numpy.quantile([0.5, 1, 10, 10, 100], q): h = q * 4.
  EXPECT_NEAR(quantile_sorted(v, 0.1), 0.7, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.5), 10.0, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.6), 10.0, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.9), 64.0, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.99), 96.4, 1e-9);
}

TEST(StatsTest, QuantileOfOneValueIsThatValue) {
  const std::vector<double> v = {7.25};
  for (const double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    EXPECT_EQ(quantile_sorted(v, q), 7.25) << q;
  }
}

TEST(StatsTest, QuantileOfTwoValuesInterpolates) {
  const std::vector<double> v = {10, 20};
  EXPECT_NEAR(quantile_sorted(v, 0.5), 15.0, kTol);
  EXPECT_NEAR(quantile_sorted(v, 0.9), 19.0, kTol);
}

TEST(StatsTest, QuantileOfNothingIsNaN) {
  EXPECT_TRUE(std::isnan(quantile_sorted({}, 0.5)));
  EXPECT_TRUE(std::isnan(quantile_sorted({}, 0.0)));
  EXPECT_TRUE(std::isnan(mean({})));
}

TEST(StatsTest, MeanIsExact) {
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(mean({-3}), -3.0);
}

TEST(StatsTest, DescribeSortsAndGivesExactOrderStatistics) {
  const Distribution d = describe({4, 1, 3, 2});
  EXPECT_EQ(d.count, 4u);
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_NEAR(d.p50, 2.5, kTol);
  EXPECT_NEAR(d.p90, 3.7, kTol);
  EXPECT_NEAR(d.p99, 3.97, kTol);
  EXPECT_NEAR(d.p999, 3.997, kTol);
  EXPECT_EQ(d.min, 1.0);
  EXPECT_EQ(d.max, 4.0);
}

TEST(StatsTest, DescribeOfOneValue) {
  const Distribution d = describe({3.5});
  EXPECT_EQ(d.count, 1u);
  EXPECT_EQ(d.mean, 3.5);
  EXPECT_EQ(d.p50, 3.5);
  EXPECT_EQ(d.p999, 3.5);
  EXPECT_EQ(d.min, 3.5);
  EXPECT_EQ(d.max, 3.5);
}

TEST(StatsTest, DescribedQuantilesAreOrderedOnRandomData) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    std::vector<double> v(1 + static_cast<size_t>(rng.range(0, 2000)));
    // Heavy-tailed, like latencies.
    for (double& x : v)
      x = std::exp(rng.uniform(-3.0, 6.0));
    const Distribution d = describe(v);
    SCOPED_TRACE(seed);
    EXPECT_EQ(d.count, v.size());
    EXPECT_LE(d.min, d.p50);
    EXPECT_LE(d.p50, d.p90);
    EXPECT_LE(d.p90, d.p99);
    EXPECT_LE(d.p99, d.p999);
    EXPECT_LE(d.p999, d.max);
    EXPECT_LE(d.min, d.mean);
    EXPECT_LE(d.mean, d.max);
  }
}

TEST(StatsTest, DescribeOfNothingHasCountZero) {
  const Distribution d = describe({});
  EXPECT_EQ(d.count, 0u);
}

TEST(StatsTest, JsonCarriesEveryFieldWithP999ByDefault) {
  const nlohmann::json j = to_json(describe({4, 1, 3, 2}));
  EXPECT_EQ(j["count"], 4);
  EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 2.5);
  EXPECT_NEAR(j["p50"].get<double>(), 2.5, kTol);
  EXPECT_NEAR(j["p90"].get<double>(), 3.7, kTol);
  EXPECT_NEAR(j["p99"].get<double>(), 3.97, kTol);
  EXPECT_NEAR(j["p999"].get<double>(), 3.997, kTol);
  EXPECT_DOUBLE_EQ(j["max"].get<double>(), 4.0);
}

TEST(StatsTest, JsonWithoutP999LeavesItOut) {
  const nlohmann::json j = to_json(describe({1, 2}), false);
  EXPECT_FALSE(j.contains("p999"));
  for (const char* k : {"count", "mean", "p50", "p90", "p99", "max"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
}

TEST(StatsTest, JsonOfNothingIsNullsNotZeros) {
  const nlohmann::json j = to_json(describe({}));
  EXPECT_EQ(j["count"], 0);
  for (const char* k : {"mean", "p50", "p90", "p99", "p999", "max"}) {
    ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_TRUE(j[k].is_null()) << k;
  }
}

}  // namespace
}  // namespace mmprof
