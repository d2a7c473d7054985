// Rng (xoshiro256** seeded by SplitMix64): determinism, independent per-item streams, ranges.
// Seeds are fixed, so every check below is deterministic.
#include "util/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace mmprof {
namespace {

std::vector<uint64_t> draw(Rng rng, size_t n) {
  std::vector<uint64_t> out(n);
  for (auto& x : out)
    x = rng.next();
  return out;
}

TEST(RngTest, SplitMix64MatchesTheReferenceValues) {
  // Vigna's splitmix64.c seeded with 0 outputs these two first; its k-th output is this
  // function applied to (k - 1) * gamma, since the function adds gamma itself.
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
}

TEST(RngTest, SameSeedSameSequence) {
  EXPECT_EQ(draw(Rng(42), 1000), draw(Rng(42), 1000));
}

TEST(RngTest, DifferentSeedsDifferentSequences) {
  EXPECT_NE(draw(Rng(42), 16), draw(Rng(43), 16));
  EXPECT_NE(draw(Rng(0), 16), draw(Rng(1), 16));
}

TEST(RngTest, SequenceDoesNotRepeatQuickly) {
  const auto v = draw(Rng(7), 10000);
  EXPECT_EQ(std::set<uint64_t>(v.begin(), v.end()).size(), v.size());
}

TEST(RngTest, ForItemIsDeterministic) {
  EXPECT_EQ(draw(Rng::for_item(5, kStreamAugment, 17), 64),
            draw(Rng::for_item(5, kStreamAugment, 17), 64));
}

TEST(RngTest, ForItemStreamsAreIndependent) {
  // Every (seed, stream, index) triple starts its own sequence: no two agree on their first draws.
  std::set<std::vector<uint64_t>> starts;
  size_t triples = 0;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    for (uint64_t stream = kStreamShuffle; stream <= kStreamSynthBatch; ++stream) {
      for (uint64_t index = 0; index < 200; ++index) {
        starts.insert(draw(Rng::for_item(seed, stream, index), 2));
        ++triples;
      }
    }
  }
  EXPECT_EQ(starts.size(), triples);
}

TEST(RngTest, ForItemDoesNotConfuseStreamAndIndex) {
  EXPECT_NE(draw(Rng::for_item(0, 1, 2), 4), draw(Rng::for_item(0, 2, 1), 4));
  EXPECT_NE(draw(Rng::for_item(1, 0, 0), 4), draw(Rng::for_item(0, 1, 0), 4));
  EXPECT_NE(draw(Rng::for_item(1, 0, 0), 4), draw(Rng::for_item(0, 0, 1), 4));
}

TEST(RngTest, UniformIsInUnitIntervalWithMeanOneHalf) {
  Rng rng(123);
  constexpr int kDraws = 100000;
  double sum = 0, lo = 1, hi = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.01);
  EXPECT_LT(lo, 0.001);
  EXPECT_GT(hi, 0.999);
}

TEST(RngTest, UniformBetweenBoundsStaysInside) {
  Rng rng(5);
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform(-2.5, 4.0);
    ASSERT_GE(u, -2.5);
    ASSERT_LT(u, 4.0);
  }
}

TEST(RngTest, RangeIsInclusiveAndHitsBothBounds) {
  Rng rng(77);
  std::vector<int> hits(5, 0);
  for (int i = 0; i < 5000; ++i) {
    const int64_t x = rng.range(3, 7);
    ASSERT_GE(x, 3);
    ASSERT_LE(x, 7);
    ++hits[static_cast<size_t>(x - 3)];
  }
  for (size_t k = 0; k < hits.size(); ++k)
    EXPECT_GT(hits[k], 800) << "value " << k + 3;
}

TEST(RngTest, RangeHandlesNegativeAndSingletonRanges) {
  Rng rng(3);
  bool low = false, high = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t x = rng.range(-2, 2);
    ASSERT_GE(x, -2);
    ASSERT_LE(x, 2);
    low |= x == -2;
    high |= x == 2;
    EXPECT_EQ(rng.range(5, 5), 5);
  }
  EXPECT_TRUE(low);
  EXPECT_TRUE(high);
}

}  // namespace
}  // namespace mmprof
