// The GPU block of summary.json from fabricated events, with values worked out by hand.
#include "run/gpu_phase.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gpu/cuda_runtime.hpp"
#include "rundir/summary_parts.hpp"

namespace mmprof {
namespace {

using gpu::CopyKind;
using gpu::GpuEvent;
using gpu::GpuEventKind;
using nlohmann::json;

constexpr int64_t kMs = 1'000'000;

GpuEvent event(GpuEventKind kind, int64_t start_ms, int64_t end_ms, CopyKind copy = CopyKind::none,
               bool pinned = false, uint64_t bytes = 0) {
  GpuEvent e;
  e.kind = kind;
  e.copy = copy;
  e.pinned_host = pinned;
  e.start_ns = start_ms * kMs;
  e.end_ns = end_ms * kMs;
  e.bytes = bytes;
  return e;
}

// One 100 ms step whose first 20 ms the consumer waits for data. The GPU copies 2 MB (pinned)
// during 10..30 ms and runs a kernel during 30..80 ms: busy 10..80, idle 0..10 and 80..100.
// Idle overlapping the wait: 0..10. The copy ends where the kernel starts: no overlap.
struct OneStep : ::testing::Test {
  GpuTraceResult trace;
  std::vector<gpu::Interval> steps{{0, 100 * kMs}};
  std::vector<gpu::Interval> waits{{0, 20 * kMs}};
  std::vector<gpu::H2DCopy> copies{{2'000'000, 25.0, true}};
  OneStep() {
    trace.events = {event(GpuEventKind::memcpy, 10, 30, CopyKind::h2d, true, 2'000'000),
                    event(GpuEventKind::kernel, 30, 80)};
    trace.clock_method = "timestamp_callback";
  }
};

TEST_F(OneStep, IdleIsSplitIntoDataWaitAndOther) {
  const json b = rundir::to_json(gpu_block(trace, steps, waits, copies));
  EXPECT_DOUBLE_EQ(b["window"]["ms"].get<double>(), 100.0);
  EXPECT_EQ(b["window"]["steps"], 1);
  EXPECT_DOUBLE_EQ(b["idle_fraction"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(b["data_wait_idle_fraction"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(b["other_idle_fraction"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(b["kernel_busy_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(b["copy_compute_overlap_fraction"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(b["busy_ms"].get<double>(), 70.0);
  EXPECT_DOUBLE_EQ(b["idle_ms"].get<double>(), 30.0);
}

TEST_F(OneStep, H2DFromCuptiAndFromCudaEventsSideBySide) {
  const json h = rundir::to_json(gpu_block(trace, steps, waits, copies))["h2d"];
  EXPECT_DOUBLE_EQ(h["mb_per_s_pinned"].get<double>(), 100.0);  // 2 MB in 20 ms (CUPTI)
  EXPECT_TRUE(h["mb_per_s_pageable"].is_null());                // no pageable copy
  EXPECT_EQ(h["bytes"], 2'000'000);
  EXPECT_EQ(h["copies"], 1);
  EXPECT_DOUBLE_EQ(h["cuda_events"]["mb_per_s"].get<double>(), 80.0);  // 2 MB in 25 ms (events)
  EXPECT_EQ(h["cuda_events"]["pinned_copies"], 1);
  EXPECT_EQ(h["cuda_events"]["per_copy_mb_per_s"]["count"], 1);
}

TEST_F(OneStep, CopyOverlappingAKernelCounts) {
  trace.events.push_back(event(GpuEventKind::memcpy, 70, 90, CopyKind::h2d, false, 1'000'000));
  const json b = rundir::to_json(gpu_block(trace, steps, waits, copies));
  // Copies 10..30 and 70..90 (40 ms), of which 70..80 overlaps the kernel.
  EXPECT_DOUBLE_EQ(b["copy_compute_overlap_fraction"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(b["h2d"]["mb_per_s_pageable"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(b["idle_fraction"].get<double>(), 0.2);  // busy 10..90
}

TEST_F(OneStep, WithoutCuptiTracedFiguresAreNullAndSayWhy) {
  trace.unavailable = "unavailable: libcupti.so.13: cannot open shared object file";
  trace.events.clear();
  const json b = rundir::to_json(gpu_block(trace, steps, waits, copies));
  for (const char* k : {"idle_fraction", "data_wait_idle_fraction", "other_idle_fraction",
                        "kernel_busy_fraction", "copy_compute_overlap_fraction"}) {
    EXPECT_TRUE(b[k].is_null()) << k;
  }
  EXPECT_EQ(b["cupti"]["unavailable"], *trace.unavailable);
  EXPECT_TRUE(b["h2d"]["mb_per_s_pinned"].is_null());
  // The CUDA events still measured the copies.
  EXPECT_DOUBLE_EQ(b["h2d"]["cuda_events"]["mb_per_s"].get<double>(), 80.0);
}

TEST(H2DCopyStats, SumsAndPerCopyBandwidth) {
  const auto s = h2d_copy_stats({{1'000'000, 1.0, true}, {3'000'000, 2.0, false}, {5, 0, true}});
  EXPECT_EQ(s.copies, 3);
  EXPECT_EQ(s.pinned_copies, 2);
  EXPECT_EQ(s.bytes, 4'000'005u);
  EXPECT_DOUBLE_EQ(s.ms, 3.0);
  // A copy of zero duration has no bandwidth; the others 1000 and 1500 MB/s.
  EXPECT_EQ(s.per_copy_mb_per_s, (std::vector<double>{1000.0, 1500.0}));
}

TEST(StepGpuRecord, WaitIntervalEndsWhenTheBatchWasReady) {
  StepGpuRecord r;
  Batch b;
  b.ready_ns = 1'000'000'000;
  b.wait_ms = 2.5;
  r.add(b, std::nullopt);
  EXPECT_TRUE(std::isnan(r.h2d_ms()));
  r.add(b, gpu::H2DCopy{100, 1.25, true});
  r.add(b, gpu::H2DCopy{100, 0.5, true});
  ASSERT_EQ(r.waits.size(), 3u);
  EXPECT_EQ(r.waits[0], (gpu::Interval{997'500'000, 1'000'000'000}));
  EXPECT_DOUBLE_EQ(r.h2d_ms(), 1.75);
}

TEST(GpuPhase, UsedByGemmAndByCudaDevices) {
  StepConfig s;
  EXPECT_FALSE(step_uses_gpu(s));
  s.kind = StepKind::gemm;
  EXPECT_TRUE(step_uses_gpu(s));
  s.kind = StepKind::torch;
  s.device = "cuda:1";
  EXPECT_TRUE(step_uses_gpu(s));
}

TEST(GpuPhase, ACpuStepHasNoBlockAndSaysWhy) {
  StepConfig s;
  s.kind = StepKind::sleep;
  GpuPhase phase(s);
  phase.start();
  phase.add_step({0, 10}, {});
  phase.stop();
  Summary summary;
  phase.contribute(summary);
  EXPECT_FALSE(summary.gpu.has_value());
  EXPECT_EQ(summary.gpu_unavailable,
            "not used: step.kind=sleep with step.device=cpu does not run on the GPU");
  EXPECT_TRUE(phase.steps().empty());
}

TEST(GpuPhase, AGpuStepWithoutAGpuSaysUnavailable) {
  if (gpu::gpu_availability().available) GTEST_SKIP() << "this machine has a GPU";
  StepConfig s;
  s.kind = StepKind::gemm;
  GpuPhase phase(s);
  Summary summary;
  phase.contribute(summary);
  EXPECT_FALSE(summary.gpu.has_value());
  EXPECT_EQ(summary.gpu_unavailable, std::string("unavailable: ") + gpu::gpu_availability().reason);
}

}  // namespace
}  // namespace mmprof
