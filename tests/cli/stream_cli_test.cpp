// The layouts of one dataset side by side (mmprof gen --layout both): files, tar shards read by
// index in a global permutation, and tar shards streamed as WebDataset does (data.layout=
// tar_stream): each reads every sample once per epoch; a stream reads sequentially and its order
// is less random the smaller its buffer; and
// mmprof ab over the layouts shows speed, first batch and randomness per arm.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "mmprof/run_dir.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::shell_quote;
using ::testing::HasSubstr;

constexpr int kStreamImages = 240;

class StreamCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ds_.make("--images " + std::to_string(kStreamImages) +
             " --videos 0 --png-fraction 0 --layout both --shard-mb 6 --threads 2 --seed 9");
  }
  static void TearDownTestSuite() { ds_.drop(); }
  void SetUp() override { ASSERT_EQ(ds_.gen().exit_code, 0) << ds_.gen().output; }

  static fs::path data() { return ds_.path(); }
  // The pipeline phase over a little more than an epoch (a stream's workers may end on partial
  // batches), in batches of 8; every sample of the first epoch must be read once.
  json run(const std::string& name, const std::string& sets) const {
    const fs::path out = tmp_.path() / name;
    const auto r = test::run_mmprof("baseline --quiet --data " + shell_quote(data()) +
                                    " --set image.size=32 --set loader.batch_size=8 --steps " +
                                    std::to_string(kStreamImages / 8 + 6) + " --warmup-steps 0 " +
                                    sets + " --out " + shell_quote(out));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::multiset<std::string> keys = test::first_epoch_keys(out, "pipeline");
    EXPECT_EQ(keys.size(), static_cast<size_t>(kStreamImages)) << name;
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(),
              static_cast<size_t>(kStreamImages))
        << name << ": a sample was read twice in one epoch";
    return test::read_json(out / run_file::summary);
  }

  static test::SuiteDataset ds_;
  test::TempDir tmp_;
};

test::SuiteDataset StreamCli::ds_;

TEST_F(StreamCli, EachLayoutReadsEverySampleOnceAndAStreamTradesRandomnessForSequentialReads) {
  const json files = run("files", "--set data.layout=files");
  const json tar = run("tar", "--set data.layout=tar");
  const json big = run("big", "--set data.layout=tar_stream --set data.shuffle_buffer=200");
  const json small = run("small", "--set data.layout=tar_stream --set data.shuffle_buffer=4");
  const auto gap = [](const json& s) { return s["shuffle"]["gap_ratio"].get<double>(); };
  const auto sequential = [](const json& s) {
    return s["read_pattern"]["sequential_fraction"].get<double>();
  };
  // A global permutation's order is as random as a permutation; a buffer's less, the smaller.
  EXPECT_NEAR(gap(files), 1.0, 0.2);
  EXPECT_NEAR(gap(tar), 1.0, 0.2);
  EXPECT_GT(gap(files), gap(big));
  EXPECT_GT(gap(big), gap(small));
  EXPECT_LT(gap(small), 0.2);
  // Streams read each shard front to back: all but the first read of each shard continue the one
  // before; files never do, and a permutation of tar members rarely.
  EXPECT_GT(sequential(big), 0.9);
  EXPECT_GT(sequential(small), 0.9);
  EXPECT_EQ(sequential(files), 0.0);
  EXPECT_LT(sequential(tar), 0.1);
}

TEST_F(StreamCli, AbOverLayoutsShowsSpeedFirstBatchAndRandomnessPerArm) {
  const fs::path out = tmp_.path() / "ab";
  const auto r = test::run_mmprof(
      "ab --quiet --data " + shell_quote(data()) +
      " --set image.size=16 --set loader.batch_size=4 --set phases.steps=15"
      " --set metrics.interval_ms=0 --set data.shuffle_buffer=32 --rounds 6 --warmup-s 0.1"
      " --factor data.layout=files,tar_stream --out " +
      shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = test::read_text(out / run_file::matrix_md);
  EXPECT_THAT(md, HasSubstr("| arm | first batch ms | shuffle gap ratio (1 = permutation) | "
                            "sequential reads |"));
  const json e = test::read_json(out / run_file::experiment);
  std::map<std::string, std::vector<double>> gaps;
  for (const auto& t : e["trials"]) {
    if (t["shuffle_gap_ratio"].is_number()) gaps[t["arm"]].push_back(t["shuffle_gap_ratio"]);
  }
  // The base (data.layout=auto: the files) and the arms files and tar_stream.
  std::string stream_arm;
  for (const auto& arm : e["design"]["arms"]) {
    if (arm["value"] == "tar_stream") stream_arm = arm["id"].get<std::string>();
  }
  ASSERT_FALSE(stream_arm.empty()) << e["design"].dump(1);
  ASSERT_FALSE(gaps[stream_arm].empty());
  ASSERT_FALSE(gaps["base"].empty());
  for (double g : gaps[stream_arm])
    EXPECT_LT(g, *std::min_element(gaps["base"].begin(), gaps["base"].end()));
  // Another order is other content: the arm is named content-changing, not checked by digests.
  for (const auto& arm : e["design"]["arms"]) {
    if (arm["id"] == stream_arm) {
      EXPECT_EQ(arm["content"], "changing");
    }
  }
}

}  // namespace
}  // namespace mmprof
