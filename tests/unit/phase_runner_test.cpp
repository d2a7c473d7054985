// PhaseRunner on a fake clock: a fake batch source waits a known time per batch and a fake step
// computes a known time, so every figure of a phase is exact.
#include "run/phase_runner.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "mmprof/run_dir.hpp"
#include "step/dist_group.hpp"
#include "step/step.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMs = 1'000'000;

class FakeClock final : public Clock {
 public:
  int64_t now_ns() override { return t; }
  int64_t t = 1'000 * kMs;
};

// Each batch makes the consumer wait `wait_ms` on the clock, as a loader that is behind would.
class FakeSource final : public BatchSource {
 public:
  FakeSource(FakeClock& clock, int64_t wait_ms, uint32_t size) : clock_(clock), wait_ms_(wait_ms) {
    batch_.size = size;
    stats_.pin_mode = "pageable: test";
  }
  const Batch& next() override {
    if (delivered_ == 0) stats_.time_to_first_batch_ms = 7;  // -1 (LoaderStats') until then
    clock_.t += wait_ms_ * kMs;
    batch_.batch_id = delivered_++;
    batch_.epoch = static_cast<int64_t>(batch_.batch_id / kPerEpoch);
    batch_.wait_ms = static_cast<double>(wait_ms_);
    batch_.ready_ns = clock_.t;
    batch_.bytes_read = 100;
    return batch_;
  }
  const LoaderStats& stats() const override { return stats_; }
  size_t batches_per_epoch() const override { return kPerEpoch; }
  uint64_t delivered() const { return delivered_; }

  static constexpr size_t kPerEpoch = 1000;

 private:
  FakeClock& clock_;
  int64_t wait_ms_;
  Batch batch_;
  LoaderStats stats_;
  uint64_t delivered_ = 0;
};

class FakeStep final : public Step {
 public:
  FakeStep(FakeClock& clock, int64_t ms) : clock_(clock), ms_(ms) {}
  void run(const Batch&) override {
    clock_.t += ms_ * kMs;
    ++runs;
  }
  std::string describe() const override { return "fake"; }
  int runs = 0;

 private:
  FakeClock& clock_;
  int64_t ms_;
};

// One rank's view of a process group: each sync waits `sync_ms` on the clock (for a slower
// peer), and the peer stays in its timed warm-up for `peer_warm_calls` agreements.
class FakeGroup final : public DistGroup {
 public:
  FakeGroup(FakeClock& clock, int64_t sync_ms) : clock_(clock), sync_ms_(sync_ms) {}
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  std::string describe() const override { return "fake"; }
  void barrier() override {
    ++barriers;
    clock_.t += sync_ms_ * kMs;
  }
  void allreduce_gradient() override {
    ++allreduces;
    clock_.t += sync_ms_ * kMs;
  }
  void allreduce_max(std::vector<int64_t>& values) override {
    values[0] = std::max<int64_t>(values[0], peer_warm_calls-- > 0 ? 1 : 0);
  }
  std::vector<uint8_t> allgather(const void*, size_t) override { return {}; }
  void broadcast(void*, size_t) override {}

  int barriers = 0, allreduces = 0;
  int peer_warm_calls = 0;

 private:
  FakeClock& clock_;
  int64_t sync_ms_;
};

class PhaseRunnerTest : public ::testing::Test {
 protected:
  PhaseRunnerTest() {
    config_.phases.warmup_steps = 2;
    config_.phases.steps = 5;
    config_.loader.batch_size = 4;
    config_.metrics.interval_ms = 0;
  }
  PhaseRunner& runner() {
    if (!runner_) {
      recorder_.emplace(out(), false, dataset_, clock_, 0);
      recorder_->writer().manifest({{"schema", run_schema::manifest}});
      checkpoint_.emplace(out(), nullptr);
      runner_.emplace(config_, clock_, *recorder_, progress_, *checkpoint_, 0);
    }
    return *runner_;
  }
  fs::path out() const { return dir_.path() / "run"; }
  std::vector<StepRow> steps_csv() const { return RunDir::open(out()).steps(); }
  // A dataset folder of one (never decoded) sample: the recorder names samples by their keys.
  static const fs::path& with_one_sample(const fs::path& dir) {
    std::ofstream(dir / "a.jpg") << "x";
    return dir;
  }
  static PhaseMetrics phase(const char* name) {
    PhaseMetrics p;
    p.name = name;
    return p;
  }

  test::TempDir dir_, data_;
  Dataset dataset_ = Dataset::open(with_one_sample(data_.path()), Layout::files);
  FakeClock clock_;
  Config config_;
  ProgressLine progress_{ProgressStyle::none};
  std::optional<RunRecorder> recorder_;
  std::optional<CheckpointKeeper> checkpoint_;
  std::optional<PhaseRunner> runner_;
};

TEST_F(PhaseRunnerTest, EndToEndStepIsWaitPlusComputeAndWarmUpIsExcluded) {
  FakeSource source(clock_, 5, 4);
  FakeStep step(clock_, 10);
  PhaseMetrics e2e = phase("end_to_end");
  runner().loader(e2e, source, &step, nullptr);
  EXPECT_EQ(source.delivered(), 7u);  // 2 warm-up + 5 measured
  EXPECT_EQ(step.runs, 7);
  EXPECT_TRUE(e2e.ran);
  EXPECT_EQ(e2e.warmup_steps, 2);
  EXPECT_DOUBLE_EQ(e2e.warmup_s, 0.030);
  EXPECT_EQ(e2e.steps, 5);
  EXPECT_EQ(e2e.samples, 20);
  EXPECT_EQ(e2e.bytes, 500u);
  EXPECT_DOUBLE_EQ(e2e.window_s, 0.075);
  EXPECT_DOUBLE_EQ(e2e.samples_per_s(), 20 / 0.075);
  EXPECT_EQ(e2e.step_ms, std::vector<double>(5, 15.0));
  EXPECT_EQ(e2e.wait_ms, std::vector<double>(5, 5.0));
  EXPECT_EQ(e2e.compute_ms, std::vector<double>(5, 10.0));
  EXPECT_DOUBLE_EQ(e2e.time_to_first_batch_ms, 7);
  EXPECT_EQ(runner().pin_mode(), "pageable: test");
  // steps.csv: the measured steps only, stamped with the fake clock.
  const auto rows = steps_csv();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].t_start_ns, 1'030 * kMs);
  EXPECT_EQ(rows[4].t_start_ns, 1'090 * kMs);
  EXPECT_DOUBLE_EQ(rows[2].step_ms, 15.0);
  EXPECT_FALSE(rows[2].h2d_ms.has_value());
}

// Without a warm-up the loader's first batch arrives inside the measured window: its time is
// still the phase's (it was read before any batch, and so was missing, before).
TEST_F(PhaseRunnerTest, TimeToFirstBatchIsKnownWithoutAWarmUp) {
  config_.phases.warmup_steps = 0;
  FakeSource source(clock_, 5, 4);
  PhaseMetrics pipeline = phase("pipeline");
  runner().loader(pipeline, source, nullptr, nullptr);
  EXPECT_EQ(pipeline.warmup_steps, 0);
  EXPECT_DOUBLE_EQ(pipeline.time_to_first_batch_ms, 7);
}

TEST_F(PhaseRunnerTest, WarmUpLastsAtLeastWarmupSeconds) {
  config_.phases.warmup_steps = 0;
  config_.phases.warmup_s = 0.1;
  FakeSource source(clock_, 15, 4);
  PhaseMetrics pipeline = phase("pipeline");
  runner().loader(pipeline, source, nullptr, nullptr);
  EXPECT_EQ(pipeline.warmup_steps, 7);  // 7 x 15 ms is the first count >= 100 ms
  EXPECT_DOUBLE_EQ(pipeline.warmup_s, 0.105);
  EXPECT_EQ(pipeline.steps, 5);
  EXPECT_TRUE(pipeline.compute_ms.empty());  // no step: pipeline only
  EXPECT_DOUBLE_EQ(pipeline.window_s, 0.075);
}

TEST_F(PhaseRunnerTest, ComputePhaseRunsTheStepAloneForEveryMicroBatch) {
  config_.step.accum_steps = 2;
  FakeStep step(clock_, 10);
  PhaseMetrics compute = phase("compute");
  runner().compute(compute, step);
  EXPECT_EQ(step.runs, (2 + 5) * 2);
  EXPECT_EQ(compute.steps, 5);
  EXPECT_EQ(compute.batches, 10);
  EXPECT_EQ(compute.samples, 40);
  EXPECT_EQ(compute.step_ms, std::vector<double>(5, 20.0));
  EXPECT_EQ(compute.wait_ms, std::vector<double>(5, 0.0));
  EXPECT_DOUBLE_EQ(compute.window_s, 0.100);
}

// DDP's allreduce once per optimizer step (accum_steps micro-batches), inside the step's time;
// each phase starts with a barrier, so ranks measure the same steps; the loader alone syncs
// nothing.
TEST_F(PhaseRunnerTest, ASyncFollowsEachStepOfAStepPhaseAndIsPartOfTheStep) {
  config_.dist.sync = "allreduce";
  config_.step.accum_steps = 2;
  FakeGroup group(clock_, 7);
  runner().use_group(&group);
  FakeSource source(clock_, 5, 4);
  FakeStep step(clock_, 10);
  PhaseMetrics e2e = phase("end_to_end");
  runner().loader(e2e, source, &step, nullptr);
  EXPECT_EQ(group.barriers, 1);
  EXPECT_EQ(group.allreduces, 2 + 5);  // after each warm-up and measured step
  EXPECT_EQ(e2e.step_ms, std::vector<double>(5, 2 * 5 + 2 * 10 + 7.0));
  EXPECT_EQ(e2e.compute_ms, std::vector<double>(5, 20.0));
  EXPECT_EQ(e2e.sync_ms, std::vector<double>(5, 7.0));
  EXPECT_EQ(steps_csv()[0].sync_ms, 7.0);

  PhaseMetrics compute = phase("compute");
  runner().compute(compute, step);
  EXPECT_EQ(compute.step_ms, std::vector<double>(5, 27.0));
  EXPECT_EQ(compute.compute_ms, std::vector<double>(5, 20.0));
  EXPECT_EQ(compute.sync_ms, std::vector<double>(5, 7.0));

  PhaseMetrics pipeline = phase("pipeline");
  const int before = group.allreduces;
  runner().loader(pipeline, source, nullptr, nullptr);
  EXPECT_EQ(group.allreduces, before);
  EXPECT_TRUE(pipeline.sync_ms.empty());
  EXPECT_FALSE(steps_csv().back().sync_ms.has_value());
}

TEST_F(PhaseRunnerTest, ABarrierSyncTakesNoGradientAndNoneTakesNothing) {
  FakeGroup group(clock_, 3);
  runner().use_group(&group);
  FakeSource source(clock_, 5, 4);
  FakeStep step(clock_, 10);
  PhaseMetrics e2e = phase("end_to_end");
  runner().loader(e2e, source, &step, nullptr);  // dist.sync=none: the phase's barrier only
  EXPECT_EQ(group.barriers, 1);
  EXPECT_TRUE(e2e.sync_ms.empty());
  config_.dist.sync = "barrier";
  PhaseMetrics compute = phase("compute");
  runner().compute(compute, step);
  EXPECT_EQ(group.barriers, 1 + 1 + 2 + 5);
  EXPECT_EQ(group.allreduces, 0);
  EXPECT_EQ(compute.sync_ms, std::vector<double>(5, 3.0));
}

// A warm-up bounded by time ends when every rank's has: this rank is warm after 7 steps, its
// peer only after 9, and both leave together.
TEST_F(PhaseRunnerTest, ATimedWarmUpEndsWhenEveryRankIsWarm) {
  config_.phases.warmup_steps = 0;
  config_.phases.warmup_s = 0.1;
  FakeGroup group(clock_, 0);
  group.peer_warm_calls = 9;
  runner().use_group(&group);
  FakeSource source(clock_, 15, 4);
  PhaseMetrics pipeline = phase("pipeline");
  runner().loader(pipeline, source, nullptr, nullptr);
  EXPECT_EQ(pipeline.warmup_steps, 9);
  EXPECT_EQ(pipeline.steps, 5);
}

TEST_F(PhaseRunnerTest, SteadyCheckRunsBeforeTheWindowAndIsRecorded) {
  config_.phases.steady_blocks = 3;  // blocks of max(4, workers x prefetch) = 4 steps
  FakeSource source(clock_, 5, 4);
  PhaseMetrics pipeline = phase("pipeline");
  runner().loader(pipeline, source, nullptr, nullptr);
  EXPECT_EQ(pipeline.warmup_steps, 2 + 3 * 4);
  EXPECT_EQ(pipeline.steps, 5);
  const auto steady = RunDir::open(out()).steady();
  ASSERT_TRUE(steady.has_value());
  EXPECT_EQ((*steady)["pipeline"]["steady"], true);  // identical blocks: no spread, no trend
}

}  // namespace
}  // namespace mmprof
