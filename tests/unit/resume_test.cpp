// Checkpoints and the epoch-boundary tally as pure units: checkpoint.json round trip and
// refusals, the keeper's write cadence (time passed in), exact stall figures.
#include "run/resume.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "run/epoch_boundary.hpp"
#include "rundir/summary_parts.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::read_json;

namespace fs = std::filesystem;
using nlohmann::json;

TEST(Checkpoint, RoundTripsAndNamesTheEpoch) {
  Checkpoint c;
  c.batches_per_epoch = 9;
  c.dataset_fingerprint = "00000000000000ab";
  c.phases["pipeline"] = {60, 60, true};
  c.phases["end_to_end"] = {23, 20, false};
  const json j = to_json(c);
  EXPECT_EQ(j["phases"]["end_to_end"]["epoch"], 2);  // batch 23 of 9 an epoch
  const Checkpoint back = checkpoint_from_json(j, "c.json");
  EXPECT_EQ(back.batches_per_epoch, 9);
  EXPECT_EQ(back.dataset_fingerprint, "00000000000000ab");
  ASSERT_EQ(back.phases.size(), 2u);
  EXPECT_EQ(back.phases.at("end_to_end").next_batch_id, 23u);
  EXPECT_EQ(back.phases.at("end_to_end").measured_steps, 20);
  EXPECT_FALSE(back.phases.at("end_to_end").done);
  EXPECT_TRUE(back.phases.at("pipeline").done);
}

TEST(Checkpoint, RefusalsNameTheFile) {
  Checkpoint c;
  c.batches_per_epoch = 9;
  c.phases["pipeline"] = {5, 5, false};
  const auto refused = [](const json& j, const std::string& what) {
    try {
      checkpoint_from_json(j, "RUN/checkpoint.json");
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("RUN/checkpoint.json " + what), std::string::npos)
          << e.what();
    }
  };
  json j = to_json(c);
  j["schema_version"] = 2;
  refused(j, "has schema_version 2");
  j = to_json(c);
  j["phases"]["compute"] = j["phases"]["pipeline"];
  refused(j, "names an unknown phase 'compute'");
  j = to_json(c);
  j["phases"]["pipeline"].erase("next_batch_id");
  refused(j, "is not a valid checkpoint");
}

TEST(CheckpointKeeper, StartsWhereTheResumePointSaysAndWritesAtMostEveryInterval) {
  test::TempDir dir;
  ResumePoint point;
  point.run = dir.path() / "old";
  point.checkpoint.batches_per_epoch = 9;
  point.checkpoint.dataset_fingerprint = "00000000000000ab";
  point.checkpoint.phases["pipeline"] = {12, 10, false};
  CheckpointKeeper keeper(dir.path(), &point, /*interval_ns=*/1000);
  EXPECT_FALSE(keeper.phase_done("pipeline"));
  EXPECT_EQ(keeper.start_batch("pipeline"), 12u);
  EXPECT_EQ(keeper.steps_done("pipeline"), 10);
  EXPECT_EQ(keeper.start_batch("end_to_end"), 0u);
  EXPECT_THROW(keeper.set_dataset(10, 0xab), InputError);  // another sample count
  try {
    keeper.set_dataset(9, 0xac);  // the same count, other files
    ADD_FAILURE() << "a changed dataset was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fingerprint 00000000000000ab, the dataset now has "
                                         "00000000000000ac"),
              std::string::npos)
        << e.what();
  }
  keeper.set_dataset(9, 0xab);

  const fs::path file = dir.path() / "checkpoint.json";
  keeper.step_done("pipeline", 12, /*measured=*/true, 1000);  // first write
  EXPECT_EQ(read_json(file)["phases"]["pipeline"]["next_batch_id"], 13);
  keeper.step_done("pipeline", 13, true, 1999);  // within the interval: not written
  EXPECT_EQ(read_json(file)["phases"]["pipeline"]["next_batch_id"], 13);
  keeper.step_done("pipeline", 14, false, 2000);  // warm-up: position only
  const json j = read_json(file);
  EXPECT_EQ(j["phases"]["pipeline"]["next_batch_id"], 15);
  EXPECT_EQ(j["phases"]["pipeline"]["measured_steps"], 12);
  keeper.finish_phase("pipeline");
  EXPECT_EQ(read_json(file)["phases"]["pipeline"]["done"], true);
  EXPECT_TRUE(keeper.phase_done("pipeline"));
}

struct Delivered {
  int64_t epoch;
  uint32_t size;
  double wait_ms, fill_ms;  // fill: the batch's collate time here (no samples)
};

// Feeds a tally one loader's batches from batch `first` on, the first `warmup` unmeasured.
void feed(EpochBoundaryTally& t, const std::string& phase, uint64_t first, int warmup,
          const std::vector<Delivered>& batches) {
  uint64_t id = first;
  for (const Delivered& d : batches) {
    Batch b;
    b.batch_id = id;
    b.epoch = d.epoch;
    b.size = d.size;
    b.wait_ms = d.wait_ms;
    b.collate_ms = d.fill_ms;
    t.observe(phase, b, first, static_cast<int>(id - first) >= warmup);
    ++id;
  }
}

TEST(EpochBoundaryTally, AStallIsWaitBeyondTheFirstBatchsOwnFillTime) {
  EpochBoundaryTally t;
  // 3 batches an epoch, a loader started at batch 3 (its own first batch is start-up), epochs
  // from the sampler's epoch ids. Every batch takes 5 ms to fill.
  feed(t, "pipeline", 3, 0,
       {{1, 4, 50, 5},
        {1, 4, 1, 5},
        {1, 4, 2, 5},
        {2, 4, 30, 5},
        {2, 4, 3, 5},
        {2, 4, 4, 5},
        {3, 4, 20, 5}});
  const json j = rundir::to_json(t.figures(false, 3));
  EXPECT_EQ(j["persistent_workers"], false);
  EXPECT_EQ(j["batches_per_epoch"], 3);
  const json& p = j["pipeline"];
  EXPECT_EQ(p["boundaries"], 2);  // batches 6 and 9
  EXPECT_EQ(p["batch_size"], 4);
  EXPECT_DOUBLE_EQ(p["stall_ms"], 25.0);       // (30 + 20) / 2
  EXPECT_DOUBLE_EQ(p["steady_wait_ms"], 2.5);  // median of 1, 2, 3, 4 (start-up's 50 left out)
  EXPECT_DOUBLE_EQ(p["excess_ms"], 22.5);
  EXPECT_DOUBLE_EQ(p["fill_ms"], 5.0);
  EXPECT_DOUBLE_EQ(p["unexplained_ms"], 20.0);  // (25 + 15) / 2
  EXPECT_DOUBLE_EQ(p["noise_ms"], 0.0);         // the others wait less than their fill time
  EXPECT_DOUBLE_EQ(p["threshold_ms"], EpochBoundaryTally::kFloorMs);
  EXPECT_EQ(p["stall"], true);
  EXPECT_EQ(p["verdict"],
            "boundary stall: the first batch of an epoch waits 20.0 ms more than its workers took "
            "to fill it (5.0 ms): the loader starts its workers again (loader.persistent_workers "
            "false)");
  EXPECT_EQ(j["stall_ms"], p["stall_ms"]);
  EXPECT_EQ(j["stall"], true);
  EXPECT_EQ(j["verdict"], p["verdict"]);
}

TEST(EpochBoundaryTally, FillTimeIsTheSamplesStagesPlusCollate) {
  EpochBoundaryTally t;
  for (uint64_t id = 0; id < 3; ++id) {
    Batch b;
    b.batch_id = id;
    b.epoch = id == 2 ? 1 : 0;
    b.size = 2;
    b.wait_ms = 20;
    b.collate_ms = 0.5;
    b.samples.resize(2);
    for (SampleInfo& s : b.samples) {
      s.read_ms = 1;
      s.decode_ms = 2;
      s.augment_ms = 0.5;
    }
    t.observe("pipeline", b, 0, true);
  }
  const json p = rundir::to_json(t.figures(true, 2))["pipeline"];
  EXPECT_DOUBLE_EQ(p["fill_ms"], 7.5);  // 2 x (1 + 2 + 0.5) + 0.5
  EXPECT_DOUBLE_EQ(p["unexplained_ms"], 12.5);
}

// In-order delivery with 2 workers and epochs of full, full, short batches (loader.drop_last
// false), as a simulation of the loader gives it: the short batch is ready at once, so the time
// it saved lands on the next batch, the epoch's first, which waits 35-40 ms while the other full
// batches wait 0-5 ms. Every batch waits no longer than its own 40 ms fill: no stall, though the
// waits alone (even against full batches only) make one.
TEST(EpochBoundaryTally, ShortFullAlternationIsNoBoundaryStall) {
  std::vector<Delivered> batches;
  for (int e = 0; e < 8; ++e) {
    const bool even = e % 2 == 0;
    batches.push_back({e, 32, even ? 40.0 : 35.0, 40});
    batches.push_back({e, 32, even ? 0.0 : 5.0, 40});
    batches.push_back({e, 16, even ? 5.0 : 0.0, 5});
  }
  EpochBoundaryTally t;
  feed(t, "pipeline", 0, 0, batches);
  const json p = rundir::to_json(t.figures(true, 3))["pipeline"];
  EXPECT_EQ(p["boundaries"], 7);
  EXPECT_EQ(p["stall"], false) << p.dump();
  EXPECT_EQ(p["verdict"], "no boundary stall");
  EXPECT_NEAR(p["unexplained_ms"].get<double>(), (3 * 40 + 4 * 35) / 7.0 - 40, 1e-9);
  // What the waits alone say, even against the other full batches' median wait (2.5 ms): 35 ms.
  EXPECT_NEAR(p["excess_ms"].get<double>(), (3 * 40 + 4 * 35) / 7.0 - 2.5, 1e-9);

  // Two batches an epoch (the 32 + 16 samples): every full batch is an epoch's first and
  // waits for the worker that fills all of them; nothing of its size to compare with, no stall.
  std::vector<Delivered> pairs;
  for (int e = 0; e < 6; ++e) {
    pairs.push_back({e, 32, 40, 40});
    pairs.push_back({e, 16, 0, 20});
  }
  EpochBoundaryTally two;
  feed(two, "pipeline", 0, 0, pairs);
  const json q = rundir::to_json(two.figures(true, 2))["pipeline"];
  EXPECT_EQ(q["boundaries"], 5);
  EXPECT_TRUE(q["steady_wait_ms"].is_null());
  EXPECT_TRUE(q["noise_ms"].is_null());
  EXPECT_EQ(q["stall"], false) << q.dump();
  EXPECT_EQ(q["verdict"], "no boundary stall");
}

// The same alternation where a fresh pool starts at each epoch: 150 ms more on the first batch.
TEST(EpochBoundaryTally, ARealStallAmongShortAndFullBatchesIsReported) {
  std::vector<Delivered> batches;
  for (int e = 0; e < 8; ++e) {
    const bool even = e % 2 == 0;
    batches.push_back({e, 32, (even ? 40.0 : 35.0) + 150, 40});
    batches.push_back({e, 32, even ? 0.0 : 5.0, 40});
    batches.push_back({e, 16, even ? 5.0 : 0.0, 5});
  }
  EpochBoundaryTally t;
  feed(t, "pipeline", 0, 0, batches);
  const json p = rundir::to_json(t.figures(false, 3))["pipeline"];
  EXPECT_EQ(p["stall"], true) << p.dump();
  EXPECT_NEAR(p["unexplained_ms"].get<double>(), (3 * 40 + 4 * 35) / 7.0 + 150 - 40, 1e-9);
  EXPECT_EQ(p["verdict"].get<std::string>().rfind("boundary stall: the first batch of an epoch "
                                                  "waits 147.1 ms more than its workers took",
                                                  0),
            0u)
      << p["verdict"];
}

// Same-size batches that wait beyond their fill time (a slow hand-over) set the noise a boundary
// must exceed.
TEST(EpochBoundaryTally, WaitsBeyondFillThatSameSizeBatchesShareAreNoise) {
  std::vector<Delivered> batches;
  for (int e = 0; e < 5; ++e) {
    for (int k = 0; k < 4; ++k)
      batches.push_back({e, 8, 10.0 + (k == 0 ? 4 : k), 5});  // 6-9 ms beyond the fill
  }
  EpochBoundaryTally t;
  feed(t, "pipeline", 0, 0, batches);
  const json p = rundir::to_json(t.figures(true, 4))["pipeline"];
  EXPECT_DOUBLE_EQ(p["unexplained_ms"], 9.0);
  EXPECT_NEAR(p["noise_ms"].get<double>(), 8.0, 1e-9);  // p90 of 6, 7 and 8, five of each
  EXPECT_EQ(p["stall"], true);
}

TEST(EpochBoundaryTally, NoBoundaryGivesNulls) {
  EpochBoundaryTally t;
  feed(t, "end_to_end", 0, 0, {{0, 2, 9, 1}, {0, 2, 5, 1}, {0, 2, 1, 1}});
  const json j = rundir::to_json(t.figures(true, 9));
  EXPECT_EQ(j["end_to_end"]["boundaries"], 0);
  EXPECT_TRUE(j["end_to_end"]["stall_ms"].is_null());
  EXPECT_TRUE(j["end_to_end"]["excess_ms"].is_null());
  EXPECT_TRUE(j["end_to_end"]["stall"].is_null());
  EXPECT_DOUBLE_EQ(j["end_to_end"]["steady_wait_ms"], 3.0);
  EXPECT_EQ(j["end_to_end"]["verdict"], "no epoch boundary in the measured steps");
  EXPECT_TRUE(j["stall_ms"].is_null());  // no pipeline phase
}

}  // namespace
}  // namespace mmprof
