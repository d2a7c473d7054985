// GPU idle attribution: interval algebra and summarize_gpu against hand-computed values.
#include "gpu/gpu_timeline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mmprof::gpu {
namespace {

GpuEvent event(GpuEventKind kind, int64_t start, int64_t end, CopyKind copy = CopyKind::none,
               bool pinned = false, uint64_t bytes = 0) {
  GpuEvent e;
  e.kind = kind;
  e.copy = copy;
  e.pinned_host = pinned;
  e.start_ns = start;
  e.end_ns = end;
  e.bytes = bytes;
  return e;
}

TEST(GpuTimelineTest, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
  const std::vector<Interval> u = union_of({{5, 10}, {0, 3}, {2, 4}, {10, 12}, {20, 20}, {15, 14}});
  EXPECT_EQ(u, (std::vector<Interval>{{0, 4}, {5, 12}}));
}

TEST(GpuTimelineTest, UnionOfNestedIntervalsIsTheOuterOne) {
  EXPECT_EQ(union_of({{10, 20}, {0, 100}, {30, 40}}), (std::vector<Interval>{{0, 100}}));
  EXPECT_TRUE(union_of({}).empty());
}

TEST(GpuTimelineTest, IntersectAndOverlap) {
  const std::vector<Interval> a{{0, 10}, {20, 30}};
  EXPECT_EQ(intersect(a, {{5, 25}, {28, 40}}),
            (std::vector<Interval>{{5, 10}, {20, 25}, {28, 30}}));
  EXPECT_EQ(overlap_ns(a, {{5, 25}}), 10);
  EXPECT_EQ(overlap_ns(a, {}), 0);
  EXPECT_EQ(overlap_ns(a, {{10, 20}}), 0);  // touching is not overlapping
  EXPECT_EQ(overlap_ns(a, {{-5, 100}}), 20);
  EXPECT_EQ(total_ns(a), 20);
}

// Steps [0,100) and [200,300), window 200 ns. Busy (clipped to the steps): [10,60) from two
// overlapping kernels and a copy, [90,100) of a memset that runs past the step, [210,260) and
// [280,300): 130 ns. Idle: [0,10) [60,90) [200,210) [260,280) = 70 ns, of which the waits
// [0,20) and [250,290) cover [0,10) and [260,280): 30 ns.
TEST(GpuTimelineTest, SummaryMatchesHandComputedValues) {
  const std::vector<GpuEvent> events{
      event(GpuEventKind::kernel, 10, 40),
      event(GpuEventKind::kernel, 30, 50),
      event(GpuEventKind::memcpy, 45, 60, CopyKind::h2d, true, 1'000'000),
      event(GpuEventKind::memset, 90, 110),
      event(GpuEventKind::kernel, 150, 180),  // between the steps: ignored
      event(GpuEventKind::kernel, 210, 260),
      event(GpuEventKind::synchronization, 260, 290),  // not busy
      event(GpuEventKind::memcpy, 280, 300, CopyKind::h2d, false, 2'000'000),
  };
  const GpuSummary s =
      summarize_gpu(events, {{200, 300}, {0, 100}}, {{0, 20}, {250, 290}, {120, 130}});
  EXPECT_EQ(s.window_ns, 200);
  EXPECT_EQ(s.busy_ns, 130);
  EXPECT_EQ(s.idle_ns, 70);
  EXPECT_EQ(s.data_wait_idle_ns, 30);
  EXPECT_EQ(s.kernel_busy_ns, 90);
  EXPECT_DOUBLE_EQ(s.idle_fraction, 0.35);
  EXPECT_DOUBLE_EQ(s.data_wait_idle_fraction, 0.15);
  EXPECT_DOUBLE_EQ(s.other_idle_fraction, 0.2);
  EXPECT_DOUBLE_EQ(s.kernel_busy_fraction, 0.45);
  // Copies [45,60) and [280,300) = 35 ns; a kernel runs during [45,50) of them.
  EXPECT_DOUBLE_EQ(s.copy_compute_overlap_fraction, 5.0 / 35.0);
  // 1 MB in 15 ns and 2 MB in 20 ns.
  EXPECT_DOUBLE_EQ(s.h2d_mb_per_s_pinned, 1.0 / 15e-9);
  EXPECT_DOUBLE_EQ(s.h2d_mb_per_s_pageable, 2.0 / 20e-9);
  EXPECT_EQ(s.h2d_bytes_pinned, 1'000'000u);
  EXPECT_EQ(s.h2d_bytes_pageable, 2'000'000u);
  EXPECT_EQ(s.kernels, 3u);
  EXPECT_EQ(s.memcpys, 2u);
  EXPECT_EQ(s.memsets, 1u);
  EXPECT_EQ(s.synchronizations, 1u);
}

TEST(GpuTimelineTest, NoStepsGiveNaNFractions) {
  const GpuSummary s = summarize_gpu({event(GpuEventKind::kernel, 0, 10)}, {}, {});
  EXPECT_EQ(s.window_ns, 0);
  EXPECT_EQ(s.busy_ns, 0);
  EXPECT_EQ(s.kernels, 0u);
  EXPECT_TRUE(std::isnan(s.idle_fraction));
  EXPECT_TRUE(std::isnan(s.kernel_busy_fraction));
}

TEST(GpuTimelineTest, NoEventsMeansAllIdleAndNoBandwidth) {
  const GpuSummary s = summarize_gpu({}, {{0, 10}, {10, 20}}, {{5, 15}});
  EXPECT_EQ(s.window_ns, 20);  // touching steps merge
  EXPECT_EQ(s.idle_ns, 20);
  EXPECT_EQ(s.data_wait_idle_ns, 10);
  EXPECT_DOUBLE_EQ(s.idle_fraction, 1.0);
  EXPECT_DOUBLE_EQ(s.other_idle_fraction, 0.5);
  EXPECT_TRUE(std::isnan(s.copy_compute_overlap_fraction));
  EXPECT_TRUE(std::isnan(s.h2d_mb_per_s_pinned));
  EXPECT_TRUE(std::isnan(s.h2d_mb_per_s_pageable));
}

TEST(GpuTimelineTest, ZeroLengthEventsCountButAreNotBusy) {
  const GpuSummary s = summarize_gpu(
      {event(GpuEventKind::kernel, 5, 5), event(GpuEventKind::kernel, 10, 10)}, {{0, 10}}, {});
  EXPECT_EQ(s.kernels, 1u);  // the instant 10 is outside [0,10)
  EXPECT_EQ(s.busy_ns, 0);
  EXPECT_EQ(s.idle_ns, 10);
}

TEST(GpuTimelineTest, EventCoveringEveryStepLeavesNoIdle) {
  const GpuSummary s =
      summarize_gpu({event(GpuEventKind::kernel, -100, 1000)}, {{0, 10}, {50, 60}}, {{0, 60}});
  EXPECT_EQ(s.busy_ns, 20);
  EXPECT_EQ(s.idle_ns, 0);
  EXPECT_EQ(s.data_wait_idle_ns, 0);
  EXPECT_EQ(s.kernels, 1u);
  EXPECT_DOUBLE_EQ(s.kernel_busy_fraction, 1.0);
}

}  // namespace
}  // namespace mmprof::gpu
