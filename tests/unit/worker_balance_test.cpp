// WorkerLoads and judge_balance(): each of mmprof's loader workers' load from hand-built batches,
// the imbalance rules and the cause they name, with exact values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run/stage_breakdown.hpp"
#include "run/worker_loads.hpp"
#include "rundir/summary_parts.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

SampleInfo item(uint32_t index, const std::string& format, int w, int h, double decode_ms) {
  return test::sample_info(
      {.index = index, .format = format, .width = w, .height = h, .decode_ms = decode_ms});
}

SampleInfo jpeg(uint32_t index, double decode_ms = 10) {
  return item(index, "jpeg", 640, 480, decode_ms);
}

SampleInfo big_webp(uint32_t index) {
  return item(index, "webp", 4096, 4096, 100);
}

Batch batch(int worker, std::vector<SampleInfo> samples, double collate_ms = 2) {
  Batch b;
  b.worker = worker;
  for (auto& s : samples)
    s.worker = worker;
  b.samples = std::move(samples);
  b.size = static_cast<uint32_t>(b.samples.size());
  b.collate_ms = collate_ms;
  return b;
}

// A window of `s` seconds from 0, where test samples start (none when s is 0).
TimeWindow seconds(double s) {
  return {s > 0, 0, static_cast<int64_t>(s * 1e9)};
}

std::string key_of(uint32_t i) {
  return "k" + std::to_string(i);
}

BalanceContext in_order(int64_t batches_per_epoch, const std::string& slowest_class = "") {
  BalanceContext c;
  c.delivery = Delivery::in_order;
  c.batches_per_epoch = batches_per_epoch;
  c.slowest_class = slowest_class;
  return c;
}

// The real run of issue 15: an epoch of one full and one short batch over two workers dealt in
// turn, so worker 0 takes every full batch. Items cost 10 ms (1 + 8 + 1), collate 2 ms a batch.
TEST(WorkerBalance, FullAndShortBatchesDealtInTurnAreTheCause) {
  WorkerLoads loads;
  for (int e = 0; e < 3; ++e) {
    std::vector<SampleInfo> full, part;
    for (uint32_t i = 0; i < 8; ++i)
      full.push_back(jpeg(i, 8));
    for (uint32_t i = 8; i < 12; ++i)
      part.push_back(jpeg(i, 8));
    loads.add_batch(batch(0, full));
    loads.add_batch(batch(1, part));
  }
  const WorkerBalance b = loads.balance(seconds(0.25), in_order(2), key_of);
  ASSERT_EQ(b.workers.size(), 2u);
  EXPECT_EQ(b.workers[0].samples, 24);
  EXPECT_EQ(b.workers[1].samples, 12);
  EXPECT_EQ(b.workers[0].batches, 3);
  EXPECT_EQ(b.workers[0].bytes.value_or(0), 24000u);
  EXPECT_DOUBLE_EQ(b.workers[0].busy_ms, 3 * (80 + 2));
  EXPECT_DOUBLE_EQ(b.workers[0].busy_fraction.value_or(0), 246.0 / 250);
  EXPECT_DOUBLE_EQ(b.workers[1].busy_fraction.value_or(0), 126.0 / 250);
  EXPECT_DOUBLE_EQ(b.workers[0].fetch_mean_ms.value_or(0), 82);
  EXPECT_DOUBLE_EQ(b.workers[0].getitem_p50_ms.value_or(0), 10);
  EXPECT_NEAR(b.busy_spread.value_or(0), 120.0 / 250, 1e-12);
  EXPECT_NEAR(b.busy_max_over_median.value_or(0), 246.0 / 186, 1e-12);
  EXPECT_TRUE(b.imbalanced);
  ASSERT_EQ(b.flags.size(), 1u);
  EXPECT_EQ(b.flags[0], "busy fractions differ by 0.48 (> 0.2): worker 0 0.98, worker 1 0.50");
  EXPECT_EQ(b.cause_kind, "batch_sizes");
  EXPECT_EQ(b.likely_cause,
            "worker 0's batches hold 8.0 samples on average against 4.0 for the others: batches "
            "go to the workers in turn (round robin), and an epoch's 2 batches are a multiple of "
            "the 2 workers, so its short last batch always falls to the same worker; with "
            "in-order delivery (in_order=true) the others wait for it");

  const json j = rundir::to_json(*loads.figures(seconds(0.25), in_order(2), key_of));
  EXPECT_EQ(j["likely_cause_kind"], "batch_sizes");
  EXPECT_EQ(j["busy_spread_limit_fraction"], kBusySpreadLimit);
  EXPECT_DOUBLE_EQ(j["workers"][0]["stage_ms"].get<double>(), 240);
  EXPECT_DOUBLE_EQ(j["workers"][0]["collate_ms"].get<double>(), 6);
  EXPECT_EQ(j["workers"][0]["bytes"], 24000);
}

// Same batch sizes; worker 0's batches each hold two WebP sources of 16.8 MP (102 ms an item):
// its median item is slow too, yet the class it gets, not the worker, is the cause.
TEST(WorkerBalance, AWorkerGettingTheSlowestClassIsNamedWithItsShare) {
  WorkerLoads loads;
  for (uint32_t k = 0; k < 3; ++k) {
    loads.add_batch(
        batch(0, {big_webp(8 * k), big_webp(8 * k + 1), jpeg(8 * k + 2), jpeg(8 * k + 3)}));
    loads.add_batch(batch(1, {jpeg(8 * k + 4), jpeg(8 * k + 5), jpeg(8 * k + 6), jpeg(8 * k + 7)}));
  }
  const std::string slowest = sample_class(big_webp(0));
  const WorkerBalance b = loads.balance(seconds(0.7), in_order(6, slowest), key_of);
  EXPECT_TRUE(b.imbalanced);
  EXPECT_DOUBLE_EQ(b.workers[0].slowest_class_share.value_or(-1), 0.5);
  EXPECT_DOUBLE_EQ(b.workers[1].slowest_class_share.value_or(-1), 0);
  EXPECT_EQ(b.workers[0].slowest_items[0].first, "k0");
  EXPECT_EQ(b.cause_kind, "slow_sample_class");
  EXPECT_EQ(b.likely_cause,
            "worker 0's fetches take 230.0 ms against 50.0 ms for the others, and 50 % of its "
            "samples are webp images >8 MP (the slowest class) against 0 % of the others': one "
            "slow sample class lands on it; with in-order delivery (in_order=true) the others "
            "wait for it");
}

TEST(WorkerBalance, EveryItemSlowerOnOneWorkerIsTheWorkerItself) {
  WorkerLoads loads;
  for (uint32_t k = 0; k < 3; ++k) {
    loads.add_batch(batch(0, {jpeg(0, 40), jpeg(1, 40), jpeg(2, 40), jpeg(3, 40)}));
    loads.add_batch(batch(1, {jpeg(4), jpeg(5), jpeg(6), jpeg(7)}));
  }
  BalanceContext out_of_order = in_order(6, "jpeg images <=0.5 MP");
  out_of_order.delivery = Delivery::out_of_order;
  const WorkerBalance b = loads.balance(seconds(0.6), out_of_order, key_of);
  EXPECT_TRUE(b.imbalanced);
  EXPECT_EQ(b.cause_kind, "slow_worker");
  EXPECT_EQ(b.likely_cause,
            "worker 0's fetches take 170.0 ms against 50.0 ms for the others, and every item is "
            "slower there (median 42.0 ms against 12.0 ms): the worker itself is slowed (CPU "
            "contention or affinity, its storage path)");
}

TEST(WorkerBalance, EvenWorkersAreBalancedWithoutACause) {
  WorkerLoads loads;
  for (int w = 0; w < 3; ++w)
    loads.add_batch(batch(w, {jpeg(0), jpeg(1)}));
  const WorkerBalance b = loads.balance(seconds(0.1), in_order(3), key_of);
  EXPECT_FALSE(b.imbalanced);
  EXPECT_DOUBLE_EQ(b.busy_spread.value_or(-1), 0);
  EXPECT_DOUBLE_EQ(b.busy_max_over_median.value_or(0), 1);
  EXPECT_TRUE(rundir::to_json(b)["likely_cause"].is_null());
  EXPECT_TRUE(rundir::to_json(b)["likely_cause_kind"].is_null());
}

// Issue 32 case 7: tar_stream with 1 shard and 2 workers: worker 1 never gets a shard. It is
// listed with nothing done and named as the cause; in a window too short for every worker to take
// two turns, a worker without a batch is listed but not yet called idle.
TEST(WorkerBalance, AConfiguredWorkerThatGotNoWorkIsListedIdle) {
  WorkerLoads loads;
  for (uint32_t i = 0; i < 6; ++i)
    loads.add_batch(batch(0, {jpeg(2 * i), jpeg(2 * i + 1)}));
  BalanceContext c = in_order(6);
  c.workers = 2;
  const WorkerBalance b = loads.balance(seconds(1), c, key_of);
  ASSERT_EQ(b.workers.size(), 2u);
  EXPECT_EQ(b.workers[1].worker, 1);
  EXPECT_EQ(b.workers[1].batches, 0);
  EXPECT_DOUBLE_EQ(b.workers[1].busy_fraction.value_or(-1), 0);
  EXPECT_TRUE(b.imbalanced);
  EXPECT_EQ(b.flags, std::vector<std::string>{"worker 1 delivered nothing in the window: idle"});
  EXPECT_EQ(b.cause_kind, "idle_workers");
  EXPECT_EQ(b.likely_cause,
            "1 of the 2 workers got no work: an IterableDataset with fewer shards (or items) than "
            "workers, or a sampler that leaves some none; the idle ones still cost their memory");
  // The run's summary lists it too, with nothing spent (a worker stopped by a low open-files
  // limit before its first batch made this throw std::out_of_range from map::at).
  const json j = rundir::to_json(*loads.figures(seconds(1), c, key_of));
  ASSERT_EQ(j["workers"].size(), 2u) << j.dump();
  EXPECT_EQ(j["workers"][1]["worker"], 1);
  EXPECT_EQ(j["workers"][1]["stage_ms"], 0.0);
  EXPECT_EQ(j["workers"][1]["collate_ms"], 0.0);
  EXPECT_DOUBLE_EQ(j["workers"][0]["stage_ms"].get<double>(), 6 * 2 * (1 + 10 + 1.0));
  EXPECT_DOUBLE_EQ(j["workers"][0]["collate_ms"].get<double>(), 6 * 2.0);

  WorkerLoads short_window;
  short_window.add_batch(batch(0, {jpeg(0)}));
  short_window.add_batch(batch(0, {jpeg(1)}));
  c.workers = 3;
  const WorkerBalance s = short_window.balance(seconds(1), c, key_of);
  EXPECT_EQ(s.workers.size(), 3u);
  EXPECT_FALSE(s.imbalanced);  // 2 batches: not enough for 3 workers' two turns each
}

// A batch delivered early in the window was prepared partly before it opened (the prefetch): only
// the part inside counts, so a worker that worked without a break is busy 1.0, never more.
TEST(WorkerBalance, BusyTimeCountsOnlyTheWorkInsideTheWindow) {
  const auto at = [](uint32_t index, int64_t start_ms) {
    return test::sample_info({.index = index,
                              .read_ms = 1,
                              .decode_ms = 8,
                              .augment_ms = 1,
                              .t_start_ns = start_ms * 1'000'000});
  };
  WorkerLoads loads;
  // Worker 0 works without a pause from -40 ms to 48 ms: 4 samples of 10 ms and a 2 ms collate
  // a batch; the window is [0, 48 ms), so 40 ms of its first batch fall before it.
  loads.add_batch(batch(0, {at(0, -40), at(1, -30), at(2, -20), at(3, -10)}, 2));
  loads.add_batch(batch(0, {at(4, 2), at(5, 12), at(6, 22), at(7, 32)}, 6));
  loads.add_batch(batch(1, {at(8, 10)}, 2));
  const TimeWindow window{true, 0, 48'000'000};
  const WorkerBalance b = loads.balance(window, in_order(3), key_of);
  ASSERT_EQ(b.workers.size(), 2u);
  EXPECT_NEAR(b.workers[0].busy_ms, 2 + 40 + 6, 1e-9);  // the first collate, 4 items, the second
  EXPECT_NEAR(b.workers[0].busy_fraction.value_or(0), 1.0, 1e-9);
  EXPECT_NEAR(b.workers[1].busy_fraction.value_or(0), 12.0 / 48, 1e-9);
  const json j = rundir::to_json(*loads.figures(window, in_order(3), key_of));
  EXPECT_NEAR(j["workers"][0]["stage_ms"].get<double>(), 40, 1e-9);
  EXPECT_NEAR(j["workers"][0]["collate_ms"].get<double>(), 8, 1e-9);
  // Without the clip the same worker would be "busy" 88 / 48 = 1.83.
  EXPECT_EQ(b.workers[0].batches, 2);
}

TEST(WorkerBalance, OneWorkerOrNoWindowIsNotJudged) {
  WorkerLoads loads;
  loads.add_batch(batch(0, {jpeg(0)}));
  EXPECT_FALSE(loads.balance(seconds(1), in_order(1), key_of).busy_spread.has_value());
  loads.add_batch(batch(1, {jpeg(1), jpeg(2), jpeg(3)}));
  const WorkerBalance no_window = loads.balance(seconds(0), in_order(1), key_of);
  EXPECT_FALSE(no_window.busy_spread.has_value());
  EXPECT_FALSE(no_window.imbalanced);
  EXPECT_FALSE(WorkerLoads().figures(seconds(1), in_order(1), key_of).has_value());
}

}  // namespace
}  // namespace mmprof
