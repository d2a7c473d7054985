// The recording points: what each call puts into the arena, and nothing while tracing is off.
#include "trace/tracer.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "gpu/gpu_event.hpp"
#include "probe/resource_usage.hpp"

namespace mmprof::trace {
namespace {

// Activates an arena for one test and deactivates it after.
class TracerTest : public ::testing::Test {
 protected:
  void TearDown() override { set_active(nullptr, nullptr); }
  void activate(uint32_t sample_every = 1) {
    arena_ = std::make_unique<TraceArena>(4, 1000, sample_every);
    set_active(arena_.get(), &gpu_);
  }
  std::unique_ptr<TraceArena> arena_;
  std::vector<gpu::GpuEvent> gpu_;
};

TEST_F(TracerTest, NothingIsRecordedWhileInactive) {
  ASSERT_EQ(active(), nullptr);
  sample(0, 0, 1, 100, 10, 20, 30, -1);
  span(EventName::wait, 1, 2);
  gpu_events({gpu::GpuEvent{}});
  EXPECT_TRUE(gpu_.empty());
}

TEST_F(TracerTest, SampleStagesFollowEachOtherFromTheStart) {
  activate();
  sample(1, 4, 9, 1000, 10, 20, 30, -1);
  const auto recs = arena_->records(worker_region(1));
  ASSERT_EQ(recs.size(), 3u);
  const EventName names[] = {EventName::read, EventName::decode, EventName::augment};
  const int64_t starts[] = {1000, 1010, 1030}, durs[] = {10, 20, 30};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(recs[i].name, names[i]);
    EXPECT_EQ(recs[i].t_ns, starts[i]);
    EXPECT_EQ(recs[i].dur_ns, durs[i]);
    EXPECT_EQ(recs[i].a, 4);  // batch
    EXPECT_EQ(recs[i].b, 9);  // sample index
    EXPECT_EQ(recs[i].c, 0);  // ok
  }
}

TEST_F(TracerTest, AFailedSampleHasSpansOnlyForStagesThatRan) {
  activate();
  sample(0, 2, 5, 1000, 10, 0, 0, /*decode*/ 1);
  const auto recs = arena_->records(worker_region(0));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].name, EventName::read);
  EXPECT_EQ(recs[0].c, 2);  // failed stage + 1
}

TEST_F(TracerTest, SampleEveryThinsSamplesButNotBatches) {
  activate(2);
  sample(0, 3, 1, 100, 1, 1, 1, -1);
  collate(0, 3, 1, 104, 105);
  batch(0, 3, 0, 90, 110, 1, 0);
  sample(0, 4, 2, 200, 1, 1, 1, -1);
  const auto recs = arena_->records(worker_region(0));
  ASSERT_EQ(recs.size(), 4u);  // batch 3's record, then batch 4's three stages
  EXPECT_EQ(recs[0].name, EventName::batch);
  EXPECT_EQ(recs[0].c, 1);
  EXPECT_EQ(recs[1].a, 4);
}

TEST_F(TracerTest, LoaderStartBumpsTheGeneration) {
  activate();
  consumed(0, 0);
  loader_started(2);
  consumed(0, 0);
  const auto recs = arena_->records(kMainRegion);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].generation, 0u);
  EXPECT_EQ(recs[1].name, EventName::loader_start);
  EXPECT_EQ(recs[1].a, 2);
  EXPECT_EQ(recs[2].generation, 1u);
}

TEST_F(TracerTest, StepsAndMarksCarryTheirPhase) {
  activate();
  step("end_to_end", 3, false, 10, 50, 32);
  mark(EventName::window_begin, "pipeline");
  compute("something else", 1, 2);
  const auto recs = arena_->records(kMainRegion);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].a, static_cast<int64_t>(Phase::end_to_end));
  EXPECT_EQ(recs[0].b, 3);
  EXPECT_EQ(recs[0].c, 0);
  EXPECT_EQ(recs[0].d, 32);
  EXPECT_EQ(recs[0].dur_ns, 40);
  EXPECT_EQ(recs[1].a, static_cast<int64_t>(Phase::pipeline));
  EXPECT_EQ(recs[2].a, static_cast<int64_t>(Phase::other));
  EXPECT_STREQ(phase_name(recs[0].a), "end_to_end");
  EXPECT_STREQ(phase_name(recs[2].a), "other");
}

TEST_F(TracerTest, ResourcesBecomeOneMemoryCounterPerProcessWithAnRss) {
  activate();
  Snapshot s;
  s.t_ns = 777;
  ProcessSample main_process, zombie, worker;
  main_process.pid = 10;
  main_process.mem.rss_kb = 2048;
  main_process.mem.pss_kb = 1500;
  zombie.pid = 11;  // nothing read: no counter
  worker.pid = 12;
  worker.worker = 0;
  worker.mem.rss_kb = 1024;  // PSS not read this time
  s.processes = {main_process, zombie, worker};
  resources(s);
  const auto recs = arena_->records(kSamplerRegion);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].t_ns, 777);
  EXPECT_EQ(recs[0].a, 10);
  EXPECT_EQ(recs[0].b, 2048);
  EXPECT_EQ(recs[0].c, 1500);
  EXPECT_EQ(recs[1].a, 12);
  EXPECT_EQ(recs[1].c, -1);
  EXPECT_EQ(recs[1].d, 0);
}

TEST_F(TracerTest, GpuEventsGoToTheSessionsSink) {
  activate();
  gpu::GpuEvent e;
  e.name = "gemm";
  gpu_events({e, e});
  ASSERT_EQ(gpu_.size(), 2u);
  EXPECT_EQ(gpu_[1].name, "gemm");
}

}  // namespace
}  // namespace mmprof::trace
