// A user's job's timeline from the hook's records: hand-written JSON Lines with exact expected
// figures (steps, waits, epoch gaps, warm-up, a dropped last batch, loader choice, ranks, worker
// imbalance, copy-on-write slope, hook status), and one fixture recorded from the real hook on
// a planted job (tests/fixtures/external/planted-2w/README.md), checked against its plan.
#include "external/job_timeline.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "external/cow_growth.hpp"
#include "rundir/summary_parts.hpp"
#include "support/test_support.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// summary.json's job part as `fill` leaves it (the file's keys of the figures under test).
json job_json(const std::function<void(JobFigures&)>& fill) {
  JobFigures figures;
  fill(figures);
  return rundir::to_json(figures);
}
json rank_json(const RankTimeline& t) {
  return job_json([&](JobFigures& f) { f.ranks = {t.figures()}; })["ranks"][0];
}
json hook_json(const HookStatus& h) {
  return job_json([&](JobFigures& f) { f.hook = h; })["hook"];
}

// Times are written in ms after an arbitrary CLOCK_MONOTONIC instant.
constexpr int64_t kT0 = 1'000'000'000'000;
int64_t at(double ms) {
  return kT0 + std::llround(ms * 1e6);
}

std::string opt(std::optional<int> v) {
  return v ? std::to_string(*v) : "null";
}

std::string proc(int pid, std::optional<int> rank, std::optional<int> worker_id = std::nullopt,
                 std::optional<int> main_pid = std::nullopt) {
  return fmt::format(
      R"({{"t":"proc","pid":{},"ppid":1,"role":"{}","rank":{},"local_rank":{},"world_size":null,)"
      R"("worker_id":{},"loader":{},"main_pid":{},"argv":["train.py"],"ns":{}}})",
      pid, worker_id ? "worker" : "main", opt(rank), opt(rank), opt(worker_id),
      worker_id ? "0" : "null", opt(main_pid), kT0);
}

std::string versions() {
  return R"({"t":"versions","python":"3.11.2","torch":"1.13.0a0","torchvision":null,"pil":"9.4.0",)"
         R"("pillow_simd":false,"numpy":"1.24.2","cuda":null,"cuda_available":false,)"
         R"("cuda_check":"not_compiled","ns":1})";
}

std::string loader(int id, const std::string& dataset, int workers, bool persistent = false,
                   const char* in_order = "null") {
  return fmt::format(
      R"({{"t":"loader","loader":{},"ns":{},"origin":"train.py:{}","stack":["train.py:{}"],)"
      R"("config":{{"num_workers":{},"batch_size":4,"prefetch_factor":2,"pin_memory":false,)"
      R"("persistent_workers":{},"in_order":{},"drop_last":false,"dataset":"{}"}},)"
      R"("overrides":{{"applied":{{"num_workers":{}}},"rejected":{{"in_order":"not a parameter"}}}},)"
      R"("follow":false}})",
      id, kT0, 40 + id, 40 + id, workers, persistent ? "true" : "false", in_order, dataset,
      workers);
}

std::string epoch(int l, int e, double ns, double ready) {
  return fmt::format(
      R"({{"t":"epoch","loader":{},"epoch":{},"ns":{},"ready_ns":{},"iterator":"it",)"
      R"("worker_pids":[],"reused":false,"pin_memory":false,"start_method":null}})",
      l, e, at(ns), at(ready));
}

std::string batch(int l, int e, int i, int n, double call, double ret, int size = 4) {
  return fmt::format(
      R"({{"t":"batch","loader":{},"epoch":{},"i":{},"n":{},"call_ns":{},"ret_ns":{},"size":{},)"
      R"("bytes":224,"digest":null,"hook_ns":1000}})",
      l, e, i, n, at(call), at(ret), size);
}

std::string epoch_end(int l, int e, double ns, int batches) {
  return fmt::format(R"({{"t":"epoch_end","loader":{},"epoch":{},"ns":{},"batches":{}}})", l, e,
                     at(ns), batches);
}

std::string fetch(int l, int worker, int pid, double start, double end, int size = 4,
                  double collate = 0) {
  return fmt::format(
      R"({{"t":"fetch","loader":{},"worker":{},"pid":{},"start_ns":{},"end_ns":{},"size":{},)"
      R"("collate_ns":{}}})",
      l, worker, pid, at(start), at(end), size, std::llround(collate * 1e6));
}

std::string getitem(int l, int worker, const std::string& index, double start, double dur) {
  return fmt::format(
      R"({{"t":"getitem","loader":{},"worker":{},"index":{},"start_ns":{},"dur_ns":{},"every":1}})",
      l, worker, index, at(start), std::llround(dur * 1e6));
}

std::string pin(int l, double start, double end) {
  return fmt::format(R"({{"t":"pin","loader":{},"start_ns":{},"end_ns":{},"thread":"T"}})", l,
                     at(start), at(end));
}

class JobTimelineTest : public ::testing::Test {
 protected:
  void write(int pid, const std::vector<std::string>& lines) {
    std::ofstream out(dir_.path() / fmt::format("hook-{}.jsonl", pid), std::ios::binary);
    for (const auto& l : lines)
      out << l << '\n';
  }
  HookRecords records() const { return read_hook_dir(dir_.path()); }

  // Rank 0 (pid 100): a training loader 0 (2 workers, pids 101 and 102) over three epochs, the
  // job killed in the third, and a validation loader 1 run between epochs 0 and 1.
  //   epoch 0: calls 10 100 140 180, returns 60 102 144 182, epoch_end 220
  //   loader 1: call 230 return 240, epoch_end 260
  //   epoch 1: iter 270..290, calls 300 370 410 450, returns 330 372 413 452, epoch_end 490
  //   epoch 2: iter 495..497, calls 500 540, returns 502 541, killed (no later record)
  void write_training_job() {
    write(100, {proc(100, 0),
                versions(),
                loader(0, "TrainDS", 2),
                loader(1, "ValDS", 0),
                epoch(0, 0, 0, 10),
                batch(0, 0, 0, 0, 10, 60),
                pin(0, 60, 61),
                batch(0, 0, 1, 1, 100, 102),
                batch(0, 0, 2, 2, 140, 144),
                batch(0, 0, 3, 3, 180, 182),
                epoch_end(0, 0, 220, 4),
                epoch(1, 0, 225, 226),
                getitem(1, -1, "0", 231, 8),
                fetch(1, -1, 100, 231, 239),
                batch(1, 0, 0, 0, 230, 240),
                epoch_end(1, 0, 260, 1),
                epoch(0, 1, 270, 290),
                batch(0, 1, 0, 4, 300, 330),
                batch(0, 1, 1, 5, 370, 372),
                batch(0, 1, 2, 6, 410, 413),
                batch(0, 1, 3, 7, 450, 452),
                epoch_end(0, 1, 490, 4),
                epoch(0, 2, 495, 497),
                batch(0, 2, 0, 8, 500, 502),
                batch(0, 2, 1, 9, 540, 541)});
    write(101, {proc(101, 0, 0, 100), getitem(0, 0, "99", 5, 1), getitem(0, 0, "0", 12, 10),
                getitem(0, 0, "1", 22, 10), getitem(0, 0, "2", 32, 10), getitem(0, 0, "3", 42, 10),
                fetch(0, 0, 101, 12, 52, 4, 2), getitem(0, 0, R"("a/b.jpg")", 250, 10)});
    write(102, {proc(102, 0, 1, 100), getitem(0, 1, "4", 15, 20), getitem(0, 1, "5", 35, 20),
                getitem(0, 1, "6", 55, 20), getitem(0, 1, "7", 75, 20),
                fetch(0, 1, 102, 15, 95, 4, 3), getitem(0, 1, "9", 310, 20)});
  }

  test::TempDir dir_;
};

std::vector<double> step_ms(const RankTimeline& t) {
  std::vector<double> v;
  for (const StepRow& s : t.steps)
    v.push_back(s.step_ms);
  return v;
}
std::vector<double> wait_ms(const RankTimeline& t) {
  std::vector<double> v;
  for (const StepRow& s : t.steps)
    v.push_back(s.wait_ms);
  return v;
}

// Exact to well below a microsecond (the fixtures are integer nanoseconds).
void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-9) << i;
}

TEST_F(JobTimelineTest, StepsRunFromOneCallToTheNextAndTheKilledLastBatchIsDropped) {
  write_training_job();
  const JobTimeline job = job_timeline(records());
  ASSERT_EQ(job.ranks.size(), 1u);
  const RankTimeline& t = job.ranks[0];
  EXPECT_EQ(t.pid, 100);
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.loader, 0);
  // The last batch of an epoch ends at its epoch_end; the epoch gaps are not steps.
  expect_values(step_ms(t), {90, 40, 40, 40, 70, 40, 40, 40, 40});
  expect_values(wait_ms(t), {50, 2, 4, 2, 30, 2, 3, 2, 2});
  for (const StepRow& s : t.steps) {
    EXPECT_NEAR(s.compute_ms, s.step_ms - s.wait_ms, 1e-9);
    EXPECT_EQ(s.phase, "end_to_end");
    EXPECT_EQ(s.samples, 4);
    EXPECT_EQ(s.bytes, 224u);
    EXPECT_FALSE(s.h2d_ms.has_value());
  }
  EXPECT_EQ(t.steps[0].step, 0);
  EXPECT_EQ(t.steps[8].step, 8);
  EXPECT_EQ(t.steps[0].t_start_ns, at(10));
  EXPECT_EQ(t.steps[4].t_start_ns, at(300));
  EXPECT_EQ(t.dropped_unfinished, 1);
  EXPECT_EQ(t.dropped_epoch_left, 0);
  EXPECT_EQ(t.warmup_batches, 0);
  EXPECT_EQ(t.window_start_ns, at(10));
  EXPECT_EQ(t.window_end_ns, at(540));
  EXPECT_NEAR(t.window_ms().value_or(0), 530, 1e-9);
  EXPECT_EQ(t.samples, 36);
  EXPECT_NEAR(t.step_ms_total, 440, 1e-9);
  EXPECT_NEAR(t.wait_ms_total, 97, 1e-9);
  EXPECT_NEAR(t.samples_per_s.value_or(0), 36 / 0.440, 1e-6);
  EXPECT_NEAR(t.samples_per_s_wall.value_or(0), 36 / 0.530, 1e-6);
  EXPECT_NEAR(t.stall_fraction.value_or(0), 97.0 / 440.0, 1e-12);
  EXPECT_NEAR(t.time_to_first_batch_ms.value_or(0), 60, 1e-9);
  EXPECT_EQ(t.step_ms.count, 9u);
  EXPECT_NEAR(t.step_ms.p50, 40, 1e-9);
  EXPECT_NEAR(t.step_ms.max, 90, 1e-9);
  EXPECT_NEAR(t.wait_ms.p50, 2, 1e-9);

  // Epoch gaps: 220 -> 300 (validation, a new iterator) and 490 -> 500.
  expect_values(t.epoch_gaps.gaps_ms, {80, 10});
  expect_values(t.epoch_gaps.iterator_start_ms, {10, 20, 2});
  const json j = rank_json(t);
  EXPECT_EQ(j["epoch_gaps"]["count"], 2);
  EXPECT_NEAR(j["epoch_gaps"]["mean_ms"].get<double>(), 45, 1e-9);
  EXPECT_NEAR(j["epoch_gaps"]["max_ms"].get<double>(), 80, 1e-9);
  EXPECT_NEAR(j["epoch_gaps"]["total_ms"].get<double>(), 90, 1e-9);
  EXPECT_NEAR(j["latency_ms"]["step"]["p50"].get<double>(), 40, 1e-9);
  EXPECT_EQ(j["steps"]["dropped_unfinished"], 1);
  EXPECT_NEAR(j["stall_fraction"].get<double>(), 97.0 / 440.0, 1e-12);
  EXPECT_NEAR(j["throughput"]["samples_per_s"].get<double>(), 36 / 0.440, 1e-6);
  EXPECT_FALSE(job.warnings.empty());  // the dropped batch is said
}

TEST_F(JobTimelineTest, TheEpochBoundaryComparesFirstBatchesWithTheOthersOfTheirSize) {
  write_training_job();
  // All steps: boundaries are batch 4 (wait 30) and batch 8 (wait 2) against the median wait 2
  // of the other batches: excess (28 + 0) / 2 = 14 ms, under half the median step (20 ms).
  const RankTimeline all = job_timeline(records()).ranks[0];
  const EpochBoundary& b = all.epoch_boundary;
  EXPECT_EQ(b.persistent_workers, false);
  EXPECT_EQ(b.batches_per_epoch, 4);
  EXPECT_EQ(b.boundaries, 2);
  EXPECT_NEAR(b.stall_ms.value_or(0), 16, 1e-9);
  EXPECT_NEAR(b.steady_wait_ms.value_or(0), 2, 1e-9);
  EXPECT_NEAR(b.excess_ms.value_or(0), 14, 1e-9);
  EXPECT_NEAR(b.threshold_ms, 20, 1e-9);
  EXPECT_FALSE(b.stall);
  EXPECT_EQ(b.verdict, "no boundary stall");

  // Warm-up 1 and at most 5 steps: batches 1..5, the one boundary waits 30 against 2.
  TimelineOptions o;
  o.warmup_steps = 1;
  o.max_steps = 5;
  const RankTimeline capped = job_timeline(records(), o).ranks[0];
  expect_values(step_ms(capped), {40, 40, 40, 70, 40});
  expect_values(wait_ms(capped), {2, 4, 2, 30, 2});
  EXPECT_EQ(capped.warmup_batches, 1);
  EXPECT_EQ(capped.capped_batches, 4);
  EXPECT_EQ(capped.dropped_unfinished, 0);  // batch 9 is past the cap
  EXPECT_EQ(capped.steps[0].t_start_ns, at(100));
  EXPECT_EQ(capped.window_start_ns, at(100));
  EXPECT_EQ(capped.window_end_ns, at(410));
  EXPECT_NEAR(capped.stall_fraction.value_or(0), 40.0 / 230.0, 1e-12);
  const EpochBoundary& s = capped.epoch_boundary;
  EXPECT_EQ(s.boundaries, 1);
  EXPECT_NEAR(s.excess_ms.value_or(0), 28, 1e-9);
  EXPECT_TRUE(s.stall);
  EXPECT_EQ(s.verdict.rfind("boundary stall: the first batch of an epoch waits 28.0 ms more", 0),
            0u)
      << s.verdict;
  EXPECT_NE(s.verdict.find("persistent_workers=false"), std::string::npos);
  EXPECT_EQ(rank_json(capped)["epoch_boundary"]["stall"], true);
}

TEST_F(JobTimelineTest, ABatchOfAnotherSizeIsNotComparedWithTheBoundary) {
  write(600, {proc(600, std::nullopt), loader(0, "DS", 0), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), batch(0, 0, 1, 1, 10, 11, 4), batch(0, 0, 2, 2, 20, 21, 2),
              epoch_end(0, 0, 30, 3), epoch(0, 1, 30, 30), batch(0, 1, 0, 3, 40, 60, 2),
              batch(0, 1, 1, 4, 70, 71, 4), epoch_end(0, 1, 80, 2)});
  // The boundary batch has 2 samples: compared with the other 2-sample batch (wait 1), not with
  // the 4-sample ones.
  const EpochBoundary b = job_timeline(records()).ranks[0].epoch_boundary;
  EXPECT_EQ(b.boundaries, 1);
  EXPECT_NEAR(b.stall_ms.value_or(0), 20, 1e-9);
  EXPECT_NEAR(b.steady_wait_ms.value_or(0), 1, 1e-9);
  EXPECT_NEAR(b.excess_ms.value_or(0), 19, 1e-9);
}

TEST_F(JobTimelineTest, TheLoaderWithMostBatchesIsFollowedUnlessLoaderSelectsOne) {
  write_training_job();
  const HookRecords r = records();
  const JobTimeline job = job_timeline(r);
  ASSERT_EQ(job.loaders.size(), 1u);
  const LoaderChoice& c = job.loaders[0];
  ASSERT_EQ(c.loaders.size(), 2u);
  EXPECT_EQ(c.loaders[0].batches, 10);
  EXPECT_EQ(c.loaders[0].epochs, 3);
  EXPECT_EQ(c.loaders[0].dataset, "TrainDS");
  EXPECT_EQ(c.loaders[0].origin, "train.py:40");
  EXPECT_EQ(c.loaders[1].batches, 1);
  EXPECT_EQ(c.chosen, 0);
  EXPECT_EQ(c.reason, "most batches: 10 (next: loader 1 with 1)");
  EXPECT_EQ(job_json([&](JobFigures& f) { f.loaders = {c}; })["loaders"][0]["chosen"], 0);

  TimelineOptions by_index;
  by_index.loader = "1";
  const JobTimeline val = job_timeline(r, by_index);
  EXPECT_EQ(val.loaders[0].chosen, 1);
  EXPECT_EQ(val.loaders[0].reason, "--loader 1: construction order in the process");
  expect_values(step_ms(val.ranks[0]), {30});
  expect_values(wait_ms(val.ranks[0]), {10});
  EXPECT_EQ(val.ranks[0].stages.size(), 1u);  // loader 1's one item, in the main process
  EXPECT_EQ(val.ranks[0].stages[0].worker, -1);

  TimelineOptions by_name;
  by_name.loader = "ValDS";
  const JobTimeline named = job_timeline(r, by_name);
  EXPECT_EQ(named.loaders[0].chosen, 1);
  EXPECT_EQ(named.loaders[0].reason, "--loader ValDS: dataset class");

  TimelineOptions none;
  none.loader = "7";
  const JobTimeline seven = job_timeline(r, none);
  EXPECT_FALSE(seven.loaders[0].chosen.has_value());
  EXPECT_EQ(seven.loaders[0].reason,
            "--loader 7: this process has no loader 7 (its loaders: 0..1)");
  EXPECT_TRUE(seven.ranks[0].steps.empty());
  ASSERT_EQ(seven.warnings.size(), 1u);
  EXPECT_EQ(seven.warnings[0], "--loader 7 matched no loader of any process of the job");
  none.loader = "Nope";
  EXPECT_EQ(job_timeline(r, none).loaders[0].reason,
            "--loader Nope: no loader with a dataset of that class (loaders: 0 TrainDS, 1 ValDS)");
}

TEST_F(JobTimelineTest, ALoaderClassNamedTwiceFollowsTheOneWithMoreBatchesAndTiesGoFirst) {
  write(700, {proc(700, std::nullopt), loader(0, "DS", 0), loader(1, "DS", 0), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), epoch_end(0, 0, 5, 1), epoch(1, 0, 10, 10),
              batch(1, 0, 0, 0, 10, 11), batch(1, 0, 1, 1, 20, 21), epoch_end(1, 0, 30, 2)});
  TimelineOptions o;
  o.loader = "DS";
  const LoaderChoice c = job_timeline(records(), o).loaders[0];
  EXPECT_EQ(c.chosen, 1);
  EXPECT_EQ(c.reason,
            "--loader DS: dataset class (2 loaders of that class: the one with the most "
            "batches)");
  write(700, {proc(700, std::nullopt), loader(0, "A", 0), loader(1, "B", 0), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), epoch_end(0, 0, 5, 1), epoch(1, 0, 10, 10),
              batch(1, 0, 0, 0, 10, 11), epoch_end(1, 0, 30, 1)});
  const LoaderChoice tie = job_timeline(records()).loaders[0];
  EXPECT_EQ(tie.chosen, 0);
  EXPECT_EQ(tie.reason,
            "most batches: 1 (next: loader 1 with 1); a tie goes to the first constructed");
}

TEST_F(JobTimelineTest, ALoopLeavingAnEpochEarlyDropsThatBatchAndAStopEndsTheLastStep) {
  // epoch 0: calls 0 and 10, then `break` (no epoch_end); epoch 1: calls 60, 70; stop at 80.
  write(500, {proc(500, std::nullopt), loader(0, "DS", 0), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), batch(0, 0, 1, 1, 10, 11), epoch(0, 1, 50, 51),
              batch(0, 1, 0, 2, 60, 61), batch(0, 1, 1, 3, 70, 71),
              R"({"t":"stop","reason":"max_batches","loader":0,"batches":4,"ns":)" +
                  std::to_string(at(80)) + "}"});
  const RankTimeline t = job_timeline(records()).ranks[0];
  EXPECT_FALSE(t.rank.has_value());
  expect_values(step_ms(t), {10, 10, 10});
  EXPECT_EQ(t.dropped_epoch_left, 1);
  EXPECT_EQ(t.dropped_unfinished, 0);
  EXPECT_TRUE(t.epoch_gaps.gaps_ms.empty());
  EXPECT_EQ(t.window_end_ns, at(80));
}

TEST_F(JobTimelineTest, AnEpochEndWithItsCallTimeEndsTheStepThere) {
  // The StopIteration call entered at 20 and returned at 35 (non-persistent workers shut down
  // inside it): the step ends at 20, the gap runs from 20 to the next epoch's first call.
  write(510, {proc(510, std::nullopt), loader(0, "DS", 0), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), batch(0, 0, 1, 1, 10, 11),
              R"({"t":"epoch_end","loader":0,"epoch":0,"ns":)" + std::to_string(at(35)) +
                  R"(,"batches":2,"call_ns":)" + std::to_string(at(20)) + "}",
              epoch(0, 1, 40, 41), batch(0, 1, 0, 2, 50, 51), epoch_end(0, 1, 60, 1)});
  const RankTimeline t = job_timeline(records()).ranks[0];
  expect_values(step_ms(t), {10, 10, 10});
  expect_values(t.epoch_gaps.gaps_ms, {30});
}

TEST_F(JobTimelineTest, StageTimesAndPerSampleRowsOfTheFollowedLoader) {
  write_training_job();
  const RankTimeline t = job_timeline(records()).ranks[0];
  const StageTimes& st = t.stage_times;
  // In the window [10, 540): the two fetches, 10 items (5 of 10 ms, 5 of 20 ms), one pin.
  EXPECT_EQ(st.fetch_ms.count, 2u);
  EXPECT_NEAR(st.fetch_ms.mean, 60, 1e-9);
  EXPECT_NEAR(st.collate_ms.mean, 2.5, 1e-9);
  EXPECT_EQ(st.pin_ms.count, 1u);
  EXPECT_NEAR(st.pin_ms.mean, 1, 1e-9);
  EXPECT_EQ(st.getitem_ms.count, 10u);
  EXPECT_NEAR(st.getitem_ms.mean, 15, 1e-9);
  EXPECT_EQ(st.getitem_every, (std::vector<int64_t>{1}));
  EXPECT_EQ(rank_json(t)["latency_ms"]["stages"]["getitem_every"], json::array({1}));

  // Every item of loader 0 (not loader 1's), in start order; the step is the measured step
  // whose [call, next call) the item started in: before the window and in the epoch gap, -1.
  std::vector<std::pair<std::string, int64_t>> keys;
  for (const StageRow& s : t.stages)
    keys.emplace_back(s.key, s.step);
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"99", -1}, {"0", 0}, {"4", 0}, {"1", 0},        {"2", 0}, {"5", 0},
      {"3", 0},   {"6", 0}, {"7", 0}, {"a/b.jpg", -1}, {"9", 4}};
  EXPECT_EQ(keys, want);
  // Only the item started before the window [10, 540) is outside it (the epoch gap's is inside):
  // the summary's getitem figures are exactly the end_to_end rows.
  for (const StageRow& s : t.stages)
    EXPECT_EQ(s.phase, s.key == "99" ? "warmup" : "end_to_end") << s.key;
  const StageRow& row = t.stages[2];
  EXPECT_EQ(row.worker, 1);
  EXPECT_NEAR(row.getitem_ms.value_or(0), 20, 1e-9);
  EXPECT_EQ(row.t_start_ns, at(15));
  EXPECT_EQ(row.phase, "end_to_end");
  EXPECT_EQ(row.bytes, 0u);
  EXPECT_FALSE(row.read_ms || row.decode_ms || row.augment_ms || row.faults || row.majflt);
}

// Issue 31: inside a torchvision dataset's __getitem__ the hook times its loader ("decode") and
// each transform; decode and augment (their sum) are per-item figures beside getitem.
TEST_F(JobTimelineTest, TheLoaderAndTransformsTimedInsideGetitemAreDecodeAndAugment) {
  const auto item = [](const std::string& index, double start, double dur,
                       const std::string& parts) {
    std::string g = getitem(0, 0, index, start, dur);
    return g.substr(0, g.size() - 1) + R"(,"parts":)" + parts + "}";
  };
  write_training_job();
  write(101, {proc(101, 0, 0, 100),
              item("0", 12, 10, R"({"decode":6000000,"Resize":3000000,"ToTensor":1000000})"),
              item("1", 22, 20, R"({"decode":12000000,"Resize":5000000,"ToTensor":1000000})"),
              getitem(0, 0, "2", 42, 4)});
  const RankTimeline t = job_timeline(records()).ranks[0];
  const StageTimes& st = t.stage_times;
  EXPECT_EQ(st.getitem_ms.count, 8u);  // worker 1's five have no parts
  EXPECT_EQ(st.decode_ms.count, 2u);
  EXPECT_NEAR(st.decode_ms.mean, 9, 1e-9);
  EXPECT_NEAR(st.augment_ms.mean, 5, 1e-9);  // (3 + 1 + 5 + 1) / 2
  ASSERT_EQ(st.transform_ms.size(), 2u);
  EXPECT_NEAR(st.transform_ms.at("Resize").mean, 4, 1e-9);
  EXPECT_NEAR(st.transform_ms.at("ToTensor").max, 1, 1e-9);
  EXPECT_EQ(rank_json(t)["latency_ms"]["stages"]["transforms"]["Resize"]["count"], 2);
  for (const StageRow& r : t.stages) {
    if (r.key == "1") {
      EXPECT_NEAR(r.decode_ms.value_or(0), 12, 1e-9);
      EXPECT_NEAR(r.augment_ms.value_or(0), 6, 1e-9);
    } else if (r.key != "0") {
      EXPECT_FALSE(r.decode_ms || r.augment_ms) << r.key;
    }
  }
}

TEST_F(JobTimelineTest, WorkersBusyFractionsOverTheWindowAndNoImbalanceWhenEven) {
  write_training_job();
  const WorkerBalance w = job_timeline(records()).ranks[0].workers;
  ASSERT_EQ(w.workers.size(), 2u);
  EXPECT_EQ(w.workers[0].worker, 0);
  EXPECT_EQ(w.workers[0].pids, (std::vector<int>{101}));
  EXPECT_EQ(w.workers[0].batches, 1);
  EXPECT_EQ(w.workers[0].samples, 4);
  EXPECT_NEAR(w.workers[0].busy_fraction.value_or(0), 40.0 / 530.0, 1e-12);
  EXPECT_NEAR(w.workers[1].busy_fraction.value_or(0), 80.0 / 530.0, 1e-12);
  EXPECT_NEAR(w.busy_spread.value_or(0), 40.0 / 530.0, 1e-12);
  EXPECT_FALSE(w.imbalanced);
  EXPECT_TRUE(rundir::to_json(w)["likely_cause"].is_null());
}

TEST_F(JobTimelineTest, OneSlowWorkerIsFlaggedWithASlowSampleClassAsTheCause) {
  // Window [0, 400). Worker 0: two 190 ms fetches, each with one 175 ms item among 5 ms ones;
  // worker 1: two 20 ms fetches of 5 ms items. Busy 0.95 against 0.1.
  std::vector<std::string> main = {proc(400, 0), loader(0, "DS", 2), epoch(0, 0, 0, 0)};
  for (int k = 0; k < 4; ++k)
    main.push_back(batch(0, 0, k, k, 100.0 * k, 100.0 * k + 5));
  main.push_back(epoch_end(0, 0, 400, 4));
  write(400, main);
  write(401,
        {proc(401, 0, 0, 400), getitem(0, 0, "0", 0, 5), getitem(0, 0, "2", 5, 5),
         getitem(0, 0, "4", 10, 175), getitem(0, 0, "6", 185, 5), fetch(0, 0, 401, 0, 190),
         getitem(0, 0, "8", 190, 5), getitem(0, 0, "10", 195, 5), getitem(0, 0, "12", 200, 175),
         getitem(0, 0, "14", 375, 5), fetch(0, 0, 401, 190, 380)});
  std::vector<std::string> w1 = {proc(402, 0, 1, 400)};
  for (int k = 0; k < 4; ++k) {
    w1.push_back(getitem(0, 1, std::to_string(2 * k + 1), 5.0 * k, 5));
    w1.push_back(getitem(0, 1, std::to_string(2 * k + 9), 100 + 5.0 * k, 5));
  }
  w1.push_back(fetch(0, 1, 402, 0, 20));
  w1.push_back(fetch(0, 1, 402, 100, 120));
  write(402, w1);
  const WorkerBalance w = job_timeline(records()).ranks[0].workers;
  ASSERT_EQ(w.workers.size(), 2u);
  EXPECT_NEAR(w.workers[0].busy_fraction.value_or(0), 0.95, 1e-12);
  EXPECT_NEAR(w.workers[1].busy_fraction.value_or(0), 0.10, 1e-12);
  EXPECT_NEAR(w.busy_spread.value_or(0), 0.85, 1e-12);
  EXPECT_TRUE(w.imbalanced);
  ASSERT_EQ(w.flags.size(), 1u);
  EXPECT_EQ(w.flags[0], "busy fractions differ by 0.85 (> 0.2): worker 0 0.95, worker 1 0.10");
  EXPECT_NEAR(w.workers[0].fetch_mean_ms.value_or(0), 190, 1e-9);
  EXPECT_NEAR(w.workers[0].getitem_p50_ms.value_or(0), 5, 1e-9);
  ASSERT_EQ(w.workers[0].slowest_items.size(), 3u);
  EXPECT_EQ(w.workers[0].slowest_items[0].first, "4");
  EXPECT_EQ(w.workers[0].slowest_items[1].first, "12");
  EXPECT_EQ(w.likely_cause,
            "worker 0's fetches take 190.0 ms against 20.0 ms for the others, while its typical "
            "item is as fast (5.0 ms against 5.0 ms): a few slow samples (a slow sample class) "
            "land on it; slowest: 4 (175.0 ms), 12 (175.0 ms), 0 (5.0 ms); batches are delivered "
            "in order (this torch has no in_order), so the others wait for it");
}

// Issue 15: epochs of one full and one short batch over two persistent workers; each epoch's
// iterator deals its batches from worker 0 on, so worker 0 gets every full batch. The cause is
// the batch sizes, not a slow worker (the same judgement as mmprof's own loader's).
TEST_F(JobTimelineTest, FullAndShortBatchesDealtInTurnAreNamedAsTheCause) {
  write(500, {proc(500, 0), loader(0, "DS", 2, true, "true"), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 10, 4), batch(0, 0, 1, 1, 100, 105, 2), epoch_end(0, 0, 200, 2),
              epoch(0, 1, 200, 200), batch(0, 1, 0, 2, 200, 210, 4), batch(0, 1, 1, 3, 300, 305, 2),
              epoch_end(0, 1, 400, 2)});
  write(501, {proc(501, 0, 0, 500), fetch(0, 0, 501, 0, 190, 4), fetch(0, 0, 501, 200, 390, 4)});
  write(502, {proc(502, 0, 1, 500), fetch(0, 1, 502, 0, 40, 2), fetch(0, 1, 502, 200, 240, 2)});
  const WorkerBalance w = job_timeline(records()).ranks[0].workers;
  ASSERT_EQ(w.workers.size(), 2u);
  EXPECT_NEAR(w.workers[0].busy_fraction.value_or(0), 0.95, 1e-12);
  EXPECT_NEAR(w.workers[1].busy_fraction.value_or(0), 0.2, 1e-12);
  EXPECT_TRUE(w.imbalanced);
  EXPECT_EQ(w.cause_kind, "batch_sizes");
  EXPECT_EQ(w.likely_cause,
            "worker 0's batches hold 4.0 samples on average against 2.0 for the others: batches "
            "go to the workers in turn (round robin), and an epoch's 2 batches are a multiple of "
            "the 2 workers, so its short last batch always falls to the same worker; with "
            "in-order delivery (in_order=true) the others wait for it");
}

TEST_F(JobTimelineTest, AWorkerWithMoreThanOneAndAHalfTimesTheMedianBatchesIsFlagged) {
  std::vector<std::string> main = {proc(450, std::nullopt), loader(0, "DS", 3, false, "false"),
                                   epoch(0, 0, 0, 0)};
  for (int k = 0; k < 6; ++k)
    main.push_back(batch(0, 0, k, k, 10.0 * k, 10.0 * k + 1));
  main.push_back(epoch_end(0, 0, 60, 6));
  write(450, main);
  write(451, {proc(451, std::nullopt, 0, 450), fetch(0, 0, 451, 0, 2), fetch(0, 0, 451, 10, 12),
              fetch(0, 0, 451, 20, 22), fetch(0, 0, 451, 30, 32)});
  write(452, {proc(452, std::nullopt, 1, 450), fetch(0, 1, 452, 0, 2)});
  write(453, {proc(453, std::nullopt, 2, 450), fetch(0, 2, 453, 0, 2)});
  const WorkerBalance w = job_timeline(records()).ranks[0].workers;
  EXPECT_TRUE(w.imbalanced);
  ASSERT_EQ(w.flags.size(), 1u);
  EXPECT_EQ(w.flags[0], "worker 0 fetched 4 batches, > 1.5 x the median 1");
  EXPECT_EQ(w.likely_cause, "in_order=false: the faster workers take more batches (worker 0)");
}

TEST_F(JobTimelineTest, RanksAreComparedOverTheStepsEveryRankMeasured) {
  // Rank 1 (pid 200): 5 steps of 15 ms waiting 5; rank 0 (pid 300): 4 steps of 10 ms waiting 1.
  std::vector<std::string> r1 = {proc(200, 1), loader(0, "DS", 0), epoch(0, 0, 0, 0)};
  for (int k = 0; k < 5; ++k)
    r1.push_back(batch(0, 0, k, k, 15.0 * k, 15.0 * k + 5));
  r1.push_back(epoch_end(0, 0, 75, 5));
  std::vector<std::string> r0 = {proc(300, 0), loader(0, "DS", 0), epoch(0, 0, 0, 0)};
  for (int k = 0; k < 4; ++k)
    r0.push_back(batch(0, 0, k, k, 10.0 * k, 10.0 * k + 1));
  r0.push_back(epoch_end(0, 0, 40, 4));
  write(200, r1);
  write(300, r0);
  const JobTimeline job = job_timeline(records());
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.ranks[0].rank, 0);  // rank order, not pid order
  EXPECT_EQ(job.ranks[0].pid, 300);
  EXPECT_EQ(job.primary()->pid, 300);
  const RankComparison& c = job.comparison;
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_EQ(c.common_steps, 4);
  EXPECT_EQ(c.slowest, 1u);
  EXPECT_NEAR(c.slowest_total_ms.value_or(0), 60, 1e-9);
  EXPECT_EQ(c.most_waiting, 1u);
  EXPECT_NEAR(c.most_waiting_wait_ms.value_or(0), 20, 1e-9);
  EXPECT_NEAR(c.step_p50_spread.value_or(0), 15 / 12.5, 1e-12);
  EXPECT_NEAR(c.ranks[0].samples_per_s.value_or(0), 16 / 0.040, 1e-6);
  EXPECT_NEAR(c.ranks[1].stall_fraction.value_or(0), 25.0 / 75.0, 1e-12);
  const json j = job_json([&](JobFigures& f) { f.rank_comparison = c; })["rank_comparison"];
  EXPECT_EQ(j["slowest_rank"]["rank"], 1);
  EXPECT_EQ(j["slowest_rank"]["pid"], 200);
  EXPECT_EQ(j["slowest_by"], "total step_ms over the common steps");
  EXPECT_NEAR(j["ranks"][1]["step_p50_ms"].get<double>(), 15, 1e-9);
  // Four steps cannot establish a straggler (the exact test's smallest p is 0.0625 x 2 ranks):
  // rank 0's figures stand for the job, and why.
  EXPECT_EQ(c.straggler["established"], false);
  EXPECT_EQ(job.primary_why().rfind("rank 0's: no straggler established (rank 1 is the slowest "
                                    "on average, but ",
                                    0),
            0u)
      << job.primary_why();
}

// Issue 32, case 12: an established straggler's figures stand for the job (every rank of a
// synchronous job steps at its pace), not rank 0's.
TEST_F(JobTimelineTest, AnEstablishedStragglersFiguresStandForTheJob) {
  std::vector<std::string> r1 = {proc(200, 1), loader(0, "DS", 0), epoch(0, 0, 0, 0)};
  std::vector<std::string> r0 = {proc(300, 0), loader(0, "DS", 0), epoch(0, 0, 0, 0)};
  for (int k = 0; k < 12; ++k) {
    r1.push_back(batch(0, 0, k, k, 15.0 * k, 15.0 * k + 5 + 0.1 * k));  // waits 5 ms and more
    r0.push_back(batch(0, 0, k, k, 10.0 * k, 10.0 * k + 1));
  }
  r1.push_back(epoch_end(0, 0, 180, 12));
  r0.push_back(epoch_end(0, 0, 120, 12));
  write(200, r1);
  write(300, r0);
  const JobTimeline job = job_timeline(records());
  EXPECT_EQ(job.comparison.straggler["established"], true) << job.comparison.straggler.dump();
  EXPECT_EQ(job.primary()->pid, 200);
  EXPECT_EQ(job.primary_why().rfind("rank 1's: the established straggler", 0), 0u)
      << job.primary_why();
  EXPECT_EQ(job_json([&](JobFigures& f) { job.figures(f); })["primary_rank"], 1);
}

TEST_F(JobTimelineTest, ASpawnChildThatRecordedAsMainIsNotARank) {
  write(800, {proc(800, std::nullopt), loader(0, "DS", 1), epoch(0, 0, 0, 0),
              batch(0, 0, 0, 0, 0, 1), epoch_end(0, 0, 10, 1)});
  write(801, {proc(801, std::nullopt), loader(0, "DS", 1), proc(801, std::nullopt, 0, 800),
              fetch(0, 0, 801, 0, 1)});
  const auto mains = main_processes(records());
  ASSERT_EQ(mains.size(), 1u);
  EXPECT_EQ(mains[0].pid, 800);
}

TEST_F(JobTimelineTest, TheHookStatusIsOkOrSaysWhyItIsUnavailable) {
  const HookStatus none = hook_status(records());
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.status.rfind("unavailable: no hook records", 0), 0u) << none.status;
  write(900, {proc(900, std::nullopt),
              R"({"t":"error","where":"patch","message":"AttributeError: no _BaseDataLoaderIter",)"
              R"("ns":5})"});
  const HookStatus errors = hook_status(records());
  EXPECT_EQ(errors.status,
            "unavailable: AttributeError: no _BaseDataLoaderIter (hook point patch)");
  EXPECT_EQ(hook_json(errors)["errors"][0]["where"], "patch");
  write_training_job();
  const HookStatus ok = hook_status(records());
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.files, 4);  // the error-only process is still a file
  EXPECT_EQ(hook_json(ok)["status"], "ok");
}

// A torch the hook could only partly wrap: each name once (the main process and a spawn worker
// both report it), the torch version, what is not measured; timing records still count.
TEST_F(JobTimelineTest, APartialHookSaysWhatItCouldNotWrapAndWhatIsThereforeNotMeasured) {
  write_training_job();
  const std::string partial =
      R"({"t":"partial","what":"_DatasetKind.create_fetcher","why":"not in this torch",)"
      R"("measures":"the fetch, collate and __getitem__ times of every worker","ns":3})";
  write(900, {proc(900, std::nullopt), partial,
              R"({"t":"partial","what":"_utils.pin_memory._pin_memory_loop",)"
              R"("why":"no done_event parameter","measures":"pin thread","ns":4})"});
  write(901, {proc(901, std::nullopt), partial});
  const HookStatus s = hook_status(records());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status,
            "partial (torch 1.13.0a0): _DatasetKind.create_fetcher (not in this torch): not "
            "measured: the fetch, collate and __getitem__ times of every worker; "
            "_utils.pin_memory._pin_memory_loop (no done_event parameter): not measured: pin "
            "thread");
  const json j = hook_json(s);
  ASSERT_EQ(j["unpatched"].size(), 2u);
  EXPECT_EQ(j["unpatched"][0]["pid"], 900);
  EXPECT_EQ(j["unpatched"][1]["why"], "no done_event parameter");
}

TEST_F(JobTimelineTest, TheJobDescriptionHoldsConfigurationOverridesAndVersions) {
  write_training_job();
  const HookRecords r = records();
  const JobTimeline job = job_timeline(r);
  const json d = rundir::to_json(describe_job(r, job.loaders).figures());
  EXPECT_EQ(d["hook"]["status"], "ok");
  EXPECT_EQ(d["versions"]["torch"], "1.13.0a0");
  EXPECT_EQ(d["versions_differ"], false);
  ASSERT_EQ(d["loaders"].size(), 2u);
  EXPECT_EQ(d["loaders"][0]["followed"], true);
  EXPECT_EQ(d["loaders"][1]["followed"], false);
  EXPECT_EQ(d["loaders"][0]["rank"], 0);
  EXPECT_EQ(d["loaders"][0]["config"]["dataset"], "TrainDS");
  EXPECT_EQ(d["loaders"][0]["overrides"]["applied"]["num_workers"], 2);
  EXPECT_EQ(d["loaders"][0]["overrides"]["rejected"]["in_order"], "not a parameter");
  EXPECT_FALSE(d["loaders"][0]["overrides"].contains("original"));
}

TEST(CowGrowth, TheSlopeOfAStraightLineIsExactAndAboveTheThresholdIsFlagged) {
  std::vector<UssPoint> line;
  for (int k = 0; k <= 10; ++k) {  // 100 s, 12 MB/min from 100 MB
    const double t_s = 10.0 * k;
    line.push_back({k * 10'000'000'000LL, std::llround(1024 * (100 + 12 * t_s / 60))});
  }
  const CowGrowth g = cow_growth(1234, line);
  EXPECT_EQ(g.points, 11u);
  EXPECT_NEAR(g.span_s, 100, 1e-12);
  EXPECT_NEAR(g.slope_mib_per_min.value_or(0), 12, 1e-9);
  EXPECT_NEAR(g.growth_mib.value_or(0), 20, 1e-9);
  EXPECT_NEAR(g.slope_ci95_low_mib_per_min.value_or(0), 12, 1e-6);
  EXPECT_TRUE(g.growing);
  EXPECT_NE(g.verdict.find("#13246"), std::string::npos);
  EXPECT_EQ(g.threshold_mib_per_min, kCowThresholdMibPerMin);

  std::vector<UssPoint> flat;
  for (int64_t k = 0; k <= 10; ++k)  // 6 MB/min: under 10
    flat.push_back({k * 10'000'000'000LL, 1024 * (100 + k)});
  const CowGrowth f = cow_growth(1, flat);
  EXPECT_NEAR(f.slope_mib_per_min.value_or(0), 6, 1e-9);
  EXPECT_FALSE(f.growing);
  EXPECT_EQ(f.verdict.rfind("no copy-on-write growth", 0), 0u);

  // Jitter around a level: the slope's interval holds 0, not flagged even above the threshold.
  std::vector<UssPoint> noisy(8);
  const int64_t jitter_kb[] = {0, 40000, -40000, 0, 40000, -40000, 0, 60000};
  for (int64_t k = 0; k < 8; ++k)
    noisy[k] = {k * 5'000'000'000LL, 500'000 + jitter_kb[k]};
  const CowGrowth n = cow_growth(2, noisy);
  EXPECT_GT(n.slope_mib_per_min.value_or(0), kCowThresholdMibPerMin);
  EXPECT_LT(n.slope_ci95_low_mib_per_min.value_or(1), 0);
  EXPECT_FALSE(n.growing);

  // Too short to tell: 3 samples over 20 s, however steep.
  const CowGrowth s =
      cow_growth(3, {{0, 0}, {10'000'000'000LL, 102400}, {20'000'000'000LL, 204800}});
  EXPECT_NEAR(s.slope_mib_per_min.value_or(0), 600, 1e-9);
  EXPECT_FALSE(s.growing);
  EXPECT_EQ(s.verdict.rfind("too short to tell", 0), 0u);
  EXPECT_FALSE(cow_growth(4, {{0, 1}}).slope_mib_per_min.has_value());
}

TEST(CowGrowth, TheUssSeriesIsOneProcessInsideTheWindowInTimeOrder) {
  std::vector<ResourceRow> rows(5);
  rows[0].t_ns = 30;
  rows[0].pid = 7;
  rows[0].uss_kb = 3;
  rows[1].t_ns = 10;
  rows[1].pid = 7;
  rows[1].uss_kb = 1;
  rows[2].t_ns = 20;
  rows[2].pid = 8;  // another process
  rows[2].uss_kb = 2;
  rows[3].t_ns = 20;
  rows[3].pid = 7;  // no smaps_rollup: no USS
  rows[4].t_ns = 50;
  rows[4].pid = 7;  // after the window
  rows[4].uss_kb = 5;
  const auto s = uss_series(rows, 7, 10, 40);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].t_ns, 10);
  EXPECT_EQ(s[1].uss_kb, 3);
}

// ---------------------------------------------------------------------------------------------
// Recorded from the real hook (tests/fixtures/external/planted-2w/README.md): loader 0, 48 items
// sleeping 20 ms in batches of 4 on 2 workers (not persistent), two epochs with a validation
// loader 1 (8 items of 5 ms, in the main process) between them, a 30 ms training step. The
// job's own perf_counter log (job.jsonl) is the reference.

struct JobBatch {
  int loader;
  int64_t t0, t1;
};

std::vector<JobBatch> job_log(const fs::path& file) {
  std::vector<JobBatch> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    if (j["t"] == "batch") out.push_back({j["loader"], j["t0"], j["t1"]});
  }
  return out;
}

TEST(RecordedHookJob, TheTimelineMatchesThePlantedPlanAndTheJobsOwnClock) {
  const fs::path dir = test::source_dir() / "tests/fixtures/external/planted-2w";
  const HookRecords r = read_hook_dir(dir);
  EXPECT_EQ(r.pids.size(), 5u);  // the main process and 2 workers per epoch
  EXPECT_EQ(r.cut_lines, 0);
  EXPECT_TRUE(hook_status(r).ok());
  const JobTimeline job = job_timeline(r);
  ASSERT_EQ(job.ranks.size(), 1u);
  const LoaderChoice& c = job.loaders[0];
  EXPECT_EQ(c.chosen, 0);
  EXPECT_EQ(c.reason, "most batches: 24 (next: loader 1 with 2)");
  const RankTimeline& t = job.ranks[0];
  ASSERT_EQ(t.steps.size(), 24u);
  EXPECT_EQ(t.dropped_unfinished + t.dropped_epoch_left, 0);

  std::vector<JobBatch> own;
  for (const JobBatch& b : job_log(dir / "job.jsonl"))
    if (b.loader == 0) own.push_back(b);
  ASSERT_EQ(own.size(), 24u);
  for (size_t k = 0; k < own.size(); ++k) {
    const StepRow& s = t.steps[k];
    const double job_wait = static_cast<double>(own[k].t1 - own[k].t0) / 1e6;
    // The hook's [call, ret] lies inside the job's [t0, t1] (same clock); the difference is the
    // wrapper's entry and the batch record (hook_ns, < 1 ms even for digested batches).
    EXPECT_LE(s.wait_ms, job_wait) << k;
    EXPECT_LT(job_wait - s.wait_ms, 1.0) << k;
    // Every step holds the job's 30 ms sleep (time.sleep never returns early).
    EXPECT_GE(s.compute_ms, 30.0) << k;
    if (k % 12 != 11) {  // within an epoch: the job's own t0-to-t0, within 1 ms
      const double job_step = static_cast<double>(own[k + 1].t0 - own[k].t0) / 1e6;
      EXPECT_NEAR(s.step_ms, job_step, 1.0) << k;
    }
  }
  // Two workers each deliver 4 samples per 80 ms (4 items of 20 ms): at most 100 samples/s;
  // the loop's step is at least the 30 ms sleep: at most 133/s. The pipeline bounds it.
  EXPECT_EQ(t.samples, 96);
  EXPECT_LE(t.samples_per_s.value_or(0), 100.0);
  EXPECT_GE(t.samples_per_s.value_or(0), 50.0);
  // Steady state: a batch every 40 ms against a 30 ms step, so ~10 ms (a quarter) waiting, and
  // more for the first batch of each epoch.
  EXPECT_GT(t.stall_fraction.value_or(0), 0.1);
  EXPECT_LT(t.stall_fraction.value_or(1), 0.6);

  // One epoch gap holding the validation loop: 2 batches of (4 x 5 ms items + 30 ms step).
  ASSERT_EQ(t.epoch_gaps.gaps_ms.size(), 1u);
  EXPECT_GE(t.epoch_gaps.gaps_ms[0], 100.0);
  EXPECT_LT(t.epoch_gaps.gaps_ms[0], 1000.0);
  // Without persistent workers the first batch of epoch 1 waits for a whole fetch (4 x 20 ms)
  // from workers that have just started, against a steady wait of ~10 ms.
  const EpochBoundary& b = t.epoch_boundary;
  EXPECT_EQ(b.persistent_workers, false);
  EXPECT_EQ(b.batches_per_epoch, 12);
  EXPECT_EQ(b.boundaries, 1);
  EXPECT_GE(b.stall_ms.value_or(0), 80.0);
  EXPECT_LT(b.steady_wait_ms.value_or(100), 25.0);
  EXPECT_GE(b.excess_ms.value_or(0), 55.0);
  EXPECT_TRUE(b.stall);

  // 24 fetches of 4 items of 20 ms; 96 items, each at least 20 ms, median within 5 ms of it.
  EXPECT_EQ(t.stage_times.fetch_ms.count, 24u);
  EXPECT_GE(t.stage_times.fetch_ms.min, 80.0);
  EXPECT_EQ(t.stage_times.getitem_ms.count, 96u);
  EXPECT_GE(t.stage_times.getitem_ms.min, 20.0);
  EXPECT_LE(t.stage_times.getitem_ms.p50, 25.0);
  EXPECT_EQ(t.stages.size(), 96u);  // loader 1's 8 items are not the followed loader's

  // Two workers with the same load (in-order round robin): 12 batches each, a new pid per epoch,
  // busy fractions within 0.2 of each other: no imbalance.
  const WorkerBalance& w = t.workers;
  ASSERT_EQ(w.workers.size(), 2u);
  for (const WorkerStats& x : w.workers) {
    EXPECT_EQ(x.batches, 12);
    EXPECT_EQ(x.samples, 48);
    EXPECT_EQ(x.pids.size(), 2u);
    EXPECT_GT(x.busy_fraction.value_or(0), 0.3);
    EXPECT_LE(x.busy_fraction.value_or(2), 1.0);
  }
  EXPECT_FALSE(w.imbalanced);
  const auto id = identify(r, w.workers[1].pids[0]);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->label(), fmt::format("DataLoader worker 1 of loader 0 (main pid {})", t.pid));
  EXPECT_EQ(rundir::to_json(describe_job(r, job.loaders).figures())["versions"]["torch"],
            "1.13.0a0");
}

}  // namespace
}  // namespace mmprof::external
