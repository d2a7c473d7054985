// A job's manifest: mmprof's settings that observe it and its DataLoader's own arguments under
// mmprof's keys (never the stand-in's defaults), and the dataset its library's index describes.
#include "external/job_config.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mmprof/config.hpp"
#include "support/test_support.hpp"

namespace mmprof::external {
namespace {

using nlohmann::json;

json description(const json& config) {
  return {{"loaders", json::array({{{"followed", false}, {"config", {{"batch_size", 99}}}},
                                   {{"followed", true}, {"config", config}}})}};
}

json library(const std::string& name, const std::vector<std::string>& locals) {
  json l = {{"name", name},
            {"version", "1"},
            {"class", "StreamingDataset"},
            {"locations", json::array()}};
  for (const auto& p : locals)
    l["locations"].push_back({{"local", p}, {"remote", "s3://bucket/train"}});
  return l;
}

TEST(JobConfig, TheFollowedDataLoadersArgumentsUnderMmprofsKeysAndNothingOfTheStandIn) {
  const json tree = default_config_tree();
  const json c = job_config_tree(tree, description({{"batch_size", 8},
                                                    {"num_workers", 3},
                                                    {"prefetch_factor", nullptr},
                                                    {"pin_memory", true},
                                                    {"persistent_workers", false},
                                                    {"sampler", "RandomSampler"}}));
  EXPECT_EQ(c["loader"]["batch_size"], 8);  // the followed loader's, not the other one's 99
  EXPECT_EQ(c["loader"]["num_workers"], 3);
  EXPECT_TRUE(c["loader"]["prefetch_factor"].is_null());
  EXPECT_TRUE(c["loader"]["in_order"].is_null());  // a DataLoader without the argument
  EXPECT_EQ(c["loader"]["shuffle"], true);         // RandomSampler: shuffle=True
  EXPECT_EQ(c["metrics"], tree["metrics"]);
  EXPECT_EQ(c["phases"].size(), 2u);
  for (const char* section : {"image", "video", "data", "step", "decode"})
    EXPECT_FALSE(c.contains(section)) << section;
  EXPECT_EQ(
      job_config_tree(tree, description({{"sampler", "SequentialSampler"}}))["loader"]["shuffle"],
      false);
  EXPECT_TRUE(job_config_tree(
                  tree, description({{"sampler", "_InfiniteConstantSampler"}}))["loader"]["shuffle"]
                  .is_null());
  EXPECT_TRUE(job_config_tree(tree, nullptr)["loader"].is_null());  // before the job ran
}

TEST(JobConfig, AnMdsIndexIsCountedAndACorruptOrMissingOneIsListed) {
  test::TempDir dir;
  const auto good = dir.path() / "good", bad = dir.path() / "bad", none = dir.path() / "none";
  std::filesystem::create_directories(good);
  std::filesystem::create_directories(bad);
  // Two shards, the second compressed: its file on disk is zip_data's.
  std::ofstream(good / "index.json") << R"({"version": 2, "shards": [
             {"samples": 3, "raw_data": {"basename": "shard.00000.mds", "bytes": 1000}, "zip_data": null},
             {"samples": 2, "raw_data": {"basename": "shard.00001.mds", "bytes": 900},
              "zip_data": {"basename": "shard.00001.mds.zstd", "bytes": 400}}]})";
  std::ofstream(bad / "index.json") << R"({"version": 2, "shards": [{"samples": "three"}]})";
  const json d = streamed_dataset(description(
      {{"library", library("mosaicml-streaming", {good.string(), bad.string(), none.string()})}}));
  EXPECT_EQ(d["layout"], "mds");
  EXPECT_EQ(d["shards"], 2);
  EXPECT_EQ(d["samples"], 5);
  EXPECT_EQ(d["total_bytes"], 1400);
  ASSERT_EQ(d["why_incomplete"].size(), 2u) << d.dump();
  EXPECT_NE(d["why_incomplete"][0].get<std::string>().find((bad / "index.json").string() +
                                                           " is not a MDS index"),
            std::string::npos);
  EXPECT_NE(d["why_incomplete"][1].get<std::string>().find("no index yet (the shards are "
                                                           "streamed from s3://bucket/train)"),
            std::string::npos);
}

TEST(JobConfig, ALitDataIndexIsCountedAndNoIndexLeavesTheFiguresUnknown) {
  test::TempDir dir;
  std::ofstream(dir.path() / "index.json")
      << R"({"chunks": [{"chunk_bytes": 10, "chunk_size": 2, "filename": "chunk-0-0.bin"},
                        {"chunk_bytes": 7, "chunk_size": 1, "filename": "chunk-0-1.bin"}],
             "config": {}})";
  const json d =
      streamed_dataset(description({{"library", library("litdata", {dir.path().string()})}}));
  EXPECT_EQ(d["layout"], "litdata");
  EXPECT_EQ(d["samples"], 3);
  EXPECT_EQ(d["total_bytes"], 17);
  const json unknown = streamed_dataset(
      description({{"library", library("litdata", {(dir.path() / "absent").string()})}}));
  EXPECT_TRUE(unknown["samples"].is_null());  // unknown, not none
  EXPECT_EQ(unknown["why_incomplete"].size(), 1u);
  // A plain dataset, or a library without an index (WebDataset): no data record.
  EXPECT_TRUE(streamed_dataset(description({{"dataset", "ImageFolder"}})).is_null());
  EXPECT_TRUE(streamed_dataset(description({{"library", library("webdataset", {})}})).is_null());
}

}  // namespace
}  // namespace mmprof::external
