// The shared trace arena: single-producer regions, a global budget, and records that cross a
// fork (the worker-process case) intact.
#include "trace/trace_arena.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace mmprof::trace {
namespace {

TraceRecord record(int64_t t, int64_t a, EventName name = EventName::read) {
  TraceRecord r;
  r.t_ns = t;
  r.dur_ns = 10;
  r.a = a;
  r.name = name;
  return r;
}

TEST(TraceArena, KeepsEachRegionsRecordsInOrder) {
  TraceArena arena(3, 100, 1);
  for (int i = 0; i < 5; ++i)
    arena.append(0, record(i, i));
  arena.append(2, record(7, 70, EventName::batch));
  ASSERT_EQ(arena.records(0).size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(arena.records(0)[i].t_ns, i);
    EXPECT_EQ(arena.records(0)[i].a, i);
    EXPECT_EQ(arena.records(0)[i].dur_ns, 10);
  }
  EXPECT_TRUE(arena.records(1).empty());
  ASSERT_EQ(arena.records(2).size(), 1u);
  EXPECT_EQ(arena.records(2)[0].name, EventName::batch);
  EXPECT_EQ(arena.dropped_total(), 0u);
}

TEST(TraceArena, BudgetIsSharedAndOverflowIsCountedPerRegion) {
  TraceArena arena(2, 5, 1);
  for (int i = 0; i < 4; ++i)
    arena.append(0, record(i, i));
  for (int i = 0; i < 4; ++i)
    arena.append(1, record(i, i));
  EXPECT_EQ(arena.records(0).size(), 4u);
  EXPECT_EQ(arena.records(1).size(), 1u);  // the budget ran out after its first record
  EXPECT_EQ(arena.dropped(0), 0u);
  EXPECT_EQ(arena.dropped(1), 3u);
  EXPECT_EQ(arena.dropped_total(), 3u);
}

TEST(TraceArena, RecordForAMissingRegionIsDroppedNotWritten) {
  TraceArena arena(2, 10, 1);
  arena.append(5, record(1, 1));
  EXPECT_TRUE(arena.records(0).empty());
  EXPECT_TRUE(arena.records(1).empty());
  EXPECT_EQ(arena.dropped_total(), 1u);
}

TEST(TraceArena, SampleEveryPicksEveryNthBatch) {
  const TraceArena every3(1, 10, 3);
  EXPECT_TRUE(every3.samples_traced(0));
  EXPECT_FALSE(every3.samples_traced(1));
  EXPECT_FALSE(every3.samples_traced(2));
  EXPECT_TRUE(every3.samples_traced(3));
  const TraceArena every1(1, 10, 1);
  EXPECT_TRUE(every1.samples_traced(1));
  EXPECT_EQ(TraceArena(1, 10, 0).sample_every(), 1u);  // 0 means every batch, not a division
}

TEST(TraceArena, RecordsCarryTheLoaderGeneration) {
  TraceArena arena(1, 10, 1);
  arena.append(0, record(1, 1));
  arena.next_generation();
  arena.append(0, record(2, 2));
  EXPECT_EQ(arena.records(0)[0].generation, 0u);
  EXPECT_EQ(arena.records(0)[1].generation, 1u);
}

TEST(TraceArena, ForkedChildRecordsReachTheParent) {
  TraceArena arena(3, 10'000, 1);
  arena.append(0, record(1, -1));  // the parent's own, before the fork
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    for (int i = 0; i < 1000; ++i)
      arena.append(2, record(i, i * 3));
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto child = arena.records(2);
  ASSERT_EQ(child.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(child[i].a, i * 3) << i;
  EXPECT_EQ(arena.records(0).size(), 1u);
  EXPECT_TRUE(arena.records(1).empty());
}

TEST(TraceArena, TwoProducersOnOneRegionLoseNothing) {
  // A worker thread given up on as hung may still write while its replacement starts.
  TraceArena arena(1, 100'000, 1);
  auto produce = [&arena](int64_t base) {
    for (int i = 0; i < 20'000; ++i)
      arena.append(0, record(i, base + i));
  };
  std::thread a(produce, 0), b(produce, 1'000'000);
  a.join();
  b.join();
  const auto recs = arena.records(0);
  ASSERT_EQ(recs.size(), 40'000u);
  std::vector<int64_t> seen;
  for (const auto& r : recs) {
    ASSERT_TRUE(TraceArena::published(r));
    seen.push_back(r.a);
  }
  std::sort(seen.begin(), seen.end());
  for (int i = 0; i < 20'000; ++i) {
    ASSERT_EQ(seen[static_cast<size_t>(i)], i);
    ASSERT_EQ(seen[static_cast<size_t>(20'000 + i)], 1'000'000 + i);
  }
}

TEST(TraceArena, ConcurrentProducersShareTheBudgetExactly) {
  constexpr int kThreads = 4, kEach = 20'000;
  constexpr uint64_t kMax = 50'000;
  TraceArena arena(kThreads, kMax, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&arena, t] {
      for (int i = 0; i < kEach; ++i)
        arena.append(static_cast<uint32_t>(t), record(i, i));
    });
  }
  for (auto& th : threads)
    th.join();
  uint64_t kept = 0;
  for (int t = 0; t < kThreads; ++t) {
    const auto recs = arena.records(static_cast<uint32_t>(t));
    kept += recs.size();
    // A producer's kept records are a prefix of what it appended: once the budget is gone, it
    // stays gone.
    for (size_t i = 0; i < recs.size(); ++i)
      ASSERT_EQ(recs[i].a, static_cast<int64_t>(i));
  }
  EXPECT_EQ(kept, kMax);
  EXPECT_EQ(arena.dropped_total(), kThreads * kEach - kMax);
}

}  // namespace
}  // namespace mmprof::trace
