// EpochPlan: every sample once per epoch across ranks, deterministic shuffles, batch partition.
#include "data/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <vector>

namespace mmprof {
namespace {

SamplerOptions options(bool shuffle, uint64_t seed, int rank, int world_size, int batch_size) {
  SamplerOptions o;
  o.shuffle = shuffle;
  o.seed = seed;
  o.rank = rank;
  o.world_size = world_size;
  o.batch_size = batch_size;
  return o;
}

std::vector<uint32_t> concat_batches(const EpochPlan& plan) {
  std::vector<uint32_t> out;
  for (size_t b = 0; b < plan.num_batches(); ++b) {
    out.insert(out.end(), plan.batch_begin(b), plan.batch_begin(b) + plan.batch_size(b));
  }
  return out;
}

TEST(SamplerTest, EverySampleExactlyOncePerEpochAcrossThreeRanks) {
  constexpr int kWorld = 3;
  for (const bool shuffle : {false, true}) {
    for (const int batch : {1, 7, 32}) {
      for (uint32_t n = 0; n <= 50; ++n) {
        SCOPED_TRACE(testing::Message()
                     << "shuffle " << shuffle << " batch " << batch << " n " << n);
        std::vector<int> seen(n, 0);
        size_t smallest = SIZE_MAX, largest = 0;
        for (int rank = 0; rank < kWorld; ++rank) {
          const EpochPlan plan(n, 5, options(shuffle, 11, rank, kWorld, batch));
          for (const uint32_t i : plan.indices()) {
            ASSERT_LT(i, n);
            ++seen[i];
          }
          smallest = std::min(smallest, plan.indices().size());
          largest = std::max(largest, plan.indices().size());
        }
        for (uint32_t i = 0; i < n; ++i)
          EXPECT_EQ(seen[i], 1) << "index " << i;
        // Nothing padded or dropped: ranks differ by at most one sample.
        EXPECT_LE(largest - smallest, 1u);
      }
    }
  }
}

TEST(SamplerTest, RanksTakeStridedPositionsOfOneSharedPermutation) {
  const EpochPlan whole(40, 2, options(true, 9, 0, 1, 4));
  for (int rank = 0; rank < 3; ++rank) {
    const EpochPlan plan(40, 2, options(true, 9, rank, 3, 4));
    std::vector<uint32_t> expected;
    for (size_t p = static_cast<size_t>(rank); p < whole.indices().size(); p += 3) {
      expected.push_back(whole.indices()[p]);
    }
    EXPECT_EQ(plan.indices(), expected) << "rank " << rank;
  }
}

TEST(SamplerTest, BatchesPartitionTheIndicesWithOnlyTheLastPartial) {
  for (const int batch : {1, 7, 32}) {
    for (uint32_t n = 0; n <= 50; ++n) {
      for (int rank = 0; rank < 3; ++rank) {
        SCOPED_TRACE(testing::Message() << "batch " << batch << " n " << n << " rank " << rank);
        const EpochPlan plan(n, 0, options(true, 3, rank, 3, batch));
        const size_t count = plan.indices().size();
        const auto b = static_cast<size_t>(batch);
        ASSERT_EQ(plan.num_batches(), (count + b - 1) / b);
        for (size_t i = 0; i < plan.num_batches(); ++i) {
          const bool last = i + 1 == plan.num_batches();
          if (last) {
            EXPECT_GE(plan.batch_size(i), 1u);
            EXPECT_LE(plan.batch_size(i), b);
          } else {
            EXPECT_EQ(plan.batch_size(i), b) << "batch " << i;
          }
        }
        EXPECT_EQ(concat_batches(plan), plan.indices());
      }
    }
  }
}

TEST(SamplerTest, EmptyDatasetHasNoBatches) {
  const EpochPlan plan(0, 0, options(true, 0, 0, 1, 8));
  EXPECT_TRUE(plan.indices().empty());
  EXPECT_EQ(plan.num_batches(), 0u);
}

TEST(SamplerTest, MoreRanksThanSamplesLeavesSomeRanksEmpty) {
  std::vector<uint32_t> all;
  for (int rank = 0; rank < 5; ++rank) {
    const EpochPlan plan(3, 0, options(false, 0, rank, 5, 2));
    EXPECT_EQ(plan.indices().size(), rank < 3 ? 1u : 0u) << rank;
    all.insert(all.end(), plan.indices().begin(), plan.indices().end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<uint32_t>{0, 1, 2}));
}

TEST(SamplerTest, NoShuffleIsSequential) {
  const EpochPlan plan(10, 7, options(false, 123, 0, 1, 4));
  std::vector<uint32_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(plan.indices(), expected);

  const EpochPlan rank1(10, 7, options(false, 123, 1, 3, 4));
  EXPECT_EQ(rank1.indices(), (std::vector<uint32_t>{1, 4, 7}));
  EXPECT_EQ(rank1.epoch(), 7);
}

TEST(SamplerTest, ShuffleIsDeterministicBySeedAndEpoch) {
  const EpochPlan a(100, 3, options(true, 42, 0, 1, 8));
  const EpochPlan b(100, 3, options(true, 42, 0, 1, 8));
  EXPECT_EQ(a.indices(), b.indices());
  // The batch size does not change the order, only its grouping.
  const EpochPlan c(100, 3, options(true, 42, 0, 1, 5));
  EXPECT_EQ(a.indices(), c.indices());
}

TEST(SamplerTest, ShuffleActuallyPermutes) {
  const EpochPlan plan(100, 0, options(true, 0, 0, 1, 8));
  std::vector<uint32_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_NE(plan.indices(), identity);
  std::vector<uint32_t> sorted = plan.indices();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, identity);
}

TEST(SamplerTest, DifferentEpochsAndSeedsGiveDifferentOrders) {
  const EpochPlan base(100, 0, options(true, 1, 0, 1, 8));
  const EpochPlan next_epoch(100, 1, options(true, 1, 0, 1, 8));
  const EpochPlan other_seed(100, 0, options(true, 2, 0, 1, 8));
  EXPECT_NE(base.indices(), next_epoch.indices());
  EXPECT_NE(base.indices(), other_seed.indices());
  EXPECT_NE(next_epoch.indices(), other_seed.indices());
  // Many epochs: all orders distinct (a collision among 100! orders means a broken key).
  std::vector<std::vector<uint32_t>> orders;
  for (int64_t epoch = 0; epoch < 50; ++epoch) {
    orders.push_back(EpochPlan(100, epoch, options(true, 1, 0, 1, 8)).indices());
  }
  std::sort(orders.begin(), orders.end());
  EXPECT_EQ(std::unique(orders.begin(), orders.end()), orders.end());
}

// Fisher-Yates draws every permutation equally often; an off-by-one (Sattolo's algorithm, or
// never leaving an element in place) would make some of the 6 orders of 3 items impossible.
// Seeds are fixed, so this is deterministic, not a statistical test that can flake.
TEST(SamplerTest, ShuffleReachesEveryPermutationOfThree) {
  std::map<std::vector<uint32_t>, int> counts;
  constexpr int kDraws = 1200;
  for (uint64_t seed = 0; seed < kDraws; ++seed) {
    counts[EpochPlan(3, 0, options(true, seed, 0, 1, 3)).indices()]++;
  }
  EXPECT_EQ(counts.size(), 6u);
  for (const auto& [order, count] : counts) {
    EXPECT_GT(count, kDraws / 6 / 2) << order[0] << order[1] << order[2];
  }
}

// Streamed shards: `sizes[k]` samples in shard k, numbered in shard order.
ShardMembers shards_of(const std::vector<uint32_t>& sizes) {
  ShardMembers m;
  uint32_t next = 0;
  for (uint32_t n : sizes) {
    m.emplace_back(n);
    std::iota(m.back().begin(), m.back().end(), next);
    next += n;
  }
  return m;
}

SamplerOptions streamed(const ShardMembers& shards, int rank, int world, int workers, int buffer,
                        bool shuffle = true) {
  SamplerOptions o = options(shuffle, 4, rank, world, 5);
  o.shards = &shards;
  o.workers = workers;
  o.shuffle_buffer = buffer;
  return o;
}

TEST(SamplerTest, StreamedShardsGiveEverySampleOncePerEpochAcrossRanksAndWorkers) {
  const ShardMembers shards = shards_of({13, 7, 20, 9, 11, 16, 3});
  const uint32_t n = 79;
  for (const int world : {1, 2, 3}) {
    for (const int workers : {0, 1, 2, 4}) {
      for (const int epoch : {0, 1}) {
        SCOPED_TRACE(testing::Message() << "world " << world << " workers " << workers);
        std::vector<int> seen(n, 0);
        for (int rank = 0; rank < world; ++rank) {
          const EpochPlan plan(n, epoch, streamed(shards, rank, world, workers, 6));
          EXPECT_TRUE(plan.streamed());
          for (uint32_t i : concat_batches(plan))
            ++seen[i];
        }
        EXPECT_EQ(seen, std::vector<int>(n, 1));
      }
    }
  }
}

// A worker reads whole shards front to back; each of its batches comes out of its buffer only
// after the stream reached every sample in it; the DataLoader takes the workers' batches in turn.
TEST(SamplerTest, AWorkerReadsItsShardsInOrderAndBatchesFollowItsReading) {
  const ShardMembers shards = shards_of({10, 10, 10, 10, 10});
  const EpochPlan plan(50, 3, streamed(shards, 0, 1, 2, 8));
  std::map<int, std::vector<uint32_t>> out;
  std::map<int, uint32_t> last_until;
  for (size_t b = 0; b < plan.num_batches(); ++b) {
    const int w = plan.worker(b);
    const auto& stream = plan.stream(w);
    EXPECT_GE(plan.read_until(b), last_until[w]);
    last_until[w] = plan.read_until(b);
    for (size_t k = 0; k < plan.batch_size(b); ++k) {
      const uint32_t s = plan.batch_begin(b)[k];
      const auto at = std::find(stream.begin(), stream.end(), s);
      ASSERT_NE(at, stream.end()) << "sample " << s << " is not in worker " << w << "'s stream";
      EXPECT_LT(static_cast<uint32_t>(at - stream.begin()), plan.read_until(b));
      out[w].push_back(s);
    }
  }
  for (int w = 0; w < 2; ++w) {
    const auto& stream = plan.stream(w);
    // Whole shards of 10, each in order.
    ASSERT_EQ(stream.size() % 10, 0u);
    for (size_t k = 0; k < stream.size(); ++k)
      EXPECT_EQ(stream[k] % 10, k % 10);
    std::vector<uint32_t> sorted = out[w];
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> want = stream;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(sorted, want);
  }
  // Round robin while both workers have batches: 30 and 20 samples are 6 and 4 batches of 5.
  EXPECT_EQ(plan.num_batches(), 10u);
  for (size_t b = 0; b < 8; ++b)
    EXPECT_EQ(plan.worker(b), static_cast<int>(b % 2));
  EXPECT_EQ(plan.worker(8), plan.worker(9));
}

TEST(SamplerTest, WithoutShuffleOrABufferOfOneAStreamIsReadInShardOrder) {
  const ShardMembers shards = shards_of({4, 6});
  for (const bool shuffle : {false, true}) {
    const EpochPlan plan(10, 0, streamed(shards, 0, 1, 1, shuffle ? 1 : 50, shuffle));
    const auto all = concat_batches(plan);
    EXPECT_EQ(all, plan.stream(0));
    if (!shuffle) {
      EXPECT_EQ(all, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    }
    // The first batch needs only its own 5 samples read.
    EXPECT_EQ(plan.read_until(0), 5u);
  }
  // A buffer of 8 must fill before the first sample leaves it.
  EXPECT_GE(EpochPlan(10, 0, streamed(shards, 0, 1, 1, 8)).read_until(0), 8u);
}

TEST(SamplerTest, ShardOrderChangesByEpochAndIsTheSameOnEveryRank) {
  const ShardMembers shards = shards_of(std::vector<uint32_t>(12, 4));
  const auto first_shards = [&](int epoch, int rank) {
    return EpochPlan(48, epoch, streamed(shards, rank, 2, 1, 1)).stream(0);
  };
  EXPECT_NE(first_shards(0, 0), first_shards(1, 0));
  // Rank 1's shards are the ones rank 0 skipped, in the same epoch order.
  std::vector<uint32_t> both = first_shards(2, 0);
  const auto r1 = first_shards(2, 1);
  both.insert(both.end(), r1.begin(), r1.end());
  std::sort(both.begin(), both.end());
  std::vector<uint32_t> all(48);
  std::iota(all.begin(), all.end(), 0u);
  EXPECT_EQ(both, all);
}

}  // namespace
}  // namespace mmprof
