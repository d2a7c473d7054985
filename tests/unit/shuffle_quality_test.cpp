// The shuffle-quality figures on orders whose answer is known: source order, its reverse, a
// global permutation, and a shuffle buffer's order, which must rank between them.
#include "stats/shuffle_quality.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace mmprof {
namespace {

std::vector<uint32_t> iota_order(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// WebDataset's shuffle(bufsize): fill the buffer, then emit a random element and put the next
// source sample in its place; drain at the end.
std::vector<uint32_t> through_buffer(uint32_t n, size_t buffer, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> held, out;
  for (uint32_t i = 0; i < n; ++i) {
    held.push_back(i);
    if (held.size() < buffer) continue;
    const size_t k = std::uniform_int_distribution<size_t>(0, held.size() - 1)(rng);
    out.push_back(held[k]);
    held[k] = held.back();
    held.pop_back();
  }
  std::shuffle(held.begin(), held.end(), rng);
  out.insert(out.end(), held.begin(), held.end());
  return out;
}

// In batches of 8.
ShuffleQuality shuffle_quality_of(const std::vector<uint32_t>& order) {
  std::vector<uint32_t> sizes(order.size() / 8, 8);
  if (order.size() % 8 != 0) sizes.push_back(static_cast<uint32_t>(order.size() % 8));
  return shuffle_quality(order, sizes);
}

TEST(ShuffleQuality, SourceOrderIsZeroAndAPermutationIsOne) {
  const ShuffleQuality seq = shuffle_quality_of(iota_order(1000));
  EXPECT_EQ(seq.samples, 1000u);
  // One step per pair in a batch against a random pair's mean gap of (n + 1) / 3.
  EXPECT_NEAR(seq.gap_ratio, 1.0 / (1001.0 / 3.0), 1e-9);
  EXPECT_NEAR(seq.order_correlation, 1.0, 1e-12);
  std::vector<uint32_t> rev = iota_order(1000);
  std::reverse(rev.begin(), rev.end());
  EXPECT_NEAR(shuffle_quality_of(rev).order_correlation, -1.0, 1e-12);

  std::vector<uint32_t> perm = iota_order(1000);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(7));
  const ShuffleQuality p = shuffle_quality_of(perm);
  EXPECT_NEAR(p.gap_ratio, 1.0, 0.1);
  EXPECT_NEAR(p.order_correlation, 0.0, 0.1);
}

TEST(ShuffleQuality, ABiggerBufferIsMoreRandomButLessThanAPermutation) {
  std::vector<uint32_t> perm = iota_order(2000);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(3));
  const double global = shuffle_quality_of(perm).gap_ratio;
  const double big = shuffle_quality_of(through_buffer(2000, 500, 3)).gap_ratio;
  const double small = shuffle_quality_of(through_buffer(2000, 20, 3)).gap_ratio;
  EXPECT_GT(global, big);
  EXPECT_GT(big, small);
  EXPECT_GT(small, shuffle_quality_of(iota_order(2000)).gap_ratio);
}

// Two workers' sequential streams interleaved batch by batch: each batch is still neighbours.
TEST(ShuffleQuality, InterleavedSequentialBatchesAreNotRandom) {
  std::vector<uint32_t> order;
  for (uint32_t b = 0; b < 50; ++b)
    for (uint32_t k = 0; k < 8; ++k)
      order.push_back((b % 2 == 0 ? 0 : 1000) + (b / 2) * 8 + k);
  EXPECT_LT(shuffle_quality_of(order).gap_ratio, 0.01);
  // One sample per batch has no neighbours in a batch: no figure.
  EXPECT_EQ(shuffle_quality(order, std::vector<uint32_t>(order.size(), 1)).gap_ratio, 0);
}

TEST(ShuffleQuality, TooFewOrEqualSamplesGiveNoFigure) {
  EXPECT_FALSE(shuffle_quality_of({4, 2}).measured());
  const ShuffleQuality same = shuffle_quality_of({5, 5, 5, 5});
  EXPECT_EQ(same.gap_ratio, 0);
  EXPECT_EQ(same.order_correlation, 0);
}

}  // namespace
}  // namespace mmprof
