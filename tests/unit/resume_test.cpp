// Checkpoints and the epoch-boundary tally as pure units: checkpoint.json round trip and
// refusals, the keeper's write cadence (time passed in), exact stall figures.
#include "run/resume.hpp"

#include <gtest/gtest.h>

#include <string>

#include "mmprof/error.hpp"
#include "run/epoch_boundary.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  const auto bytes = test::read_bytes(path);
  return json::parse(std::string(bytes.begin(), bytes.end()));
}

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

TEST(EpochBoundaryTally, StallIsTheMeanWaitOfEpochFirstBatchesAgainstTheMedianOfTheRest) {
  EpochBoundaryTally t;
  // 3 batches an epoch, a loader started at batch 3 (its own first batch is start-up).
  const double waits[] = {50, 1, 2, 10, 3, 4, 30};  // batches 3..9
  for (uint64_t b = 3; b <= 9; ++b)
    t.observe("pipeline", b, 3, 3, waits[b - 3]);
  const json j = t.to_json(false, 3);
  EXPECT_EQ(j["persistent_workers"], false);
  EXPECT_EQ(j["batches_per_epoch"], 3);
  EXPECT_EQ(j["pipeline"]["boundaries"], 2);               // batches 6 and 9
  EXPECT_DOUBLE_EQ(j["pipeline"]["stall_ms"], 20.0);       // (10 + 30) / 2
  EXPECT_DOUBLE_EQ(j["pipeline"]["steady_wait_ms"], 3.0);  // median of 50, 1, 2, 3, 4
  EXPECT_DOUBLE_EQ(j["pipeline"]["excess_ms"], 17.0);
  EXPECT_EQ(j["stall_ms"], j["pipeline"]["stall_ms"]);
}

TEST(EpochBoundaryTally, NoBoundaryGivesNulls) {
  EpochBoundaryTally t;
  t.observe("end_to_end", 0, 0, 9, 5);
  t.observe("end_to_end", 1, 0, 9, 1);
  const json j = t.to_json(true, 9);
  EXPECT_EQ(j["end_to_end"]["boundaries"], 0);
  EXPECT_TRUE(j["end_to_end"]["stall_ms"].is_null());
  EXPECT_TRUE(j["end_to_end"]["excess_ms"].is_null());
  EXPECT_DOUBLE_EQ(j["end_to_end"]["steady_wait_ms"], 3.0);
  EXPECT_TRUE(j["stall_ms"].is_null());  // no pipeline phase
}

}  // namespace
}  // namespace mmprof
