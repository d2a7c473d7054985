// A job's manifest: mmprof's settings that observe it and its DataLoader's own arguments under
// mmprof's keys (never the stand-in's defaults), and the dataset its library's index describes.
#include "external/job_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mmprof/config.hpp"
#include "support/bad_corpus.hpp"
#include "support/jpeg_writer.hpp"
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
  const json d =
      job_dataset(description({{"library", library("mosaicml-streaming",
                                                   {good.string(), bad.string(), none.string()})}}))
          .data;
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
      job_dataset(description({{"library", library("litdata", {dir.path().string()})}})).data;
  EXPECT_EQ(d["layout"], "litdata");
  EXPECT_EQ(d["samples"], 3);
  EXPECT_EQ(d["total_bytes"], 17);
  const json unknown =
      job_dataset(
          description({{"library", library("litdata", {(dir.path() / "absent").string()})}}))
          .data;
  EXPECT_TRUE(unknown["samples"].is_null());  // unknown, not none
  EXPECT_EQ(unknown["why_incomplete"].size(), 1u);
  // A plain dataset without a root: no data record.
  EXPECT_TRUE(job_dataset(description({{"dataset", "ImageFolder"}})).data.is_null());
}

// A WebDataset's shard list: local shards of one folder are opened as mmprof's tar shards (one
// listed shard missing is said); streamed ones, or shards in two folders, are no data record,
// and data_reason says why.
TEST(JobConfig, AWebDatasetsLocalShardsAreOpenedAsTarShardsAndTheRestIsSaid) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "other");
  std::vector<uint8_t> tar;
  test::append_tar_member(tar, "k1.jpg", test::progressive_jpeg(64, 48, 0));
  test::end_tar(tar);
  for (const char* shard : {"a.tar", "b.tar", "other/c.tar"})
    test::write_bytes(dir.path() / shard, tar);
  const auto shards = [&](const std::vector<std::string>& names) {
    std::vector<std::string> paths;
    for (const auto& n : names)
      paths.push_back((dir.path() / n).string());
    json lib = library("webdataset", paths);
    for (auto& where : lib["locations"])
      where["remote"] = nullptr;
    return job_dataset(description({{"library", lib}}));
  };
  const JobDataset d = shards({"a.tar", "gone.tar"});
  EXPECT_EQ(d.data["layout"], "tar");
  EXPECT_EQ(d.data["library"], "webdataset");
  EXPECT_EQ(d.data["files"], 1);  // b.tar is in the folder, not in the job's list
  EXPECT_EQ(d.data["samples"], 1);
  EXPECT_EQ(d.data["why_incomplete"],
            json::array({"1 of the job's 2 shards are not in " + dir.path().string()}));
  EXPECT_EQ(d.data_mix["images"]["resolutions"]["64x48"], 1) << d.data_mix.dump();
  const JobDataset two = shards({"a.tar", "other/c.tar"});
  EXPECT_TRUE(two.data.is_null());
  EXPECT_NE(two.data_reason.find("the job's shards lie in 2 folders"), std::string::npos)
      << two.data_reason;
  json streamed = library("webdataset", {});
  streamed["locations"].push_back({{"local", nullptr}, {"remote", "pipe:curl -s http://x/a.tar"}});
  const JobDataset remote = job_dataset(description({{"library", streamed}}));
  EXPECT_TRUE(remote.data.is_null());
  EXPECT_EQ(remote.data_reason,
            "the WebDataset's shards are not a dataset mmprof reads: the job streams 1 of its "
            "shards from URLs (the first: pipe:curl -s http://x/a.tar)");
  EXPECT_NE(job_dataset(description({{"library", library("webdataset", {})}}))
                .data_reason.find("names no shard list"),
            std::string::npos);
}

TEST(JobConfig, AHuggingFaceDatasetIsItsRowsAndItsArrowFilesSizedOnDisk) {
  test::TempDir dir;
  const auto a = dir.path() / "data-00000-of-00002.arrow",
             b = dir.path() / "data-00001-of-00002.arrow";
  std::ofstream(a) << std::string(1000, 'a');
  std::ofstream(b) << std::string(234, 'b');
  json lib = library("datasets", {a.string(), b.string(), (dir.path() / "gone.arrow").string()});
  lib["settings"] = {{"num_rows", 96}};
  const json d = job_dataset(description({{"library", lib}})).data;
  EXPECT_EQ(d["layout"], "arrow");
  EXPECT_EQ(d["samples"], 96);  // the dataset's own count: Arrow files are not read
  EXPECT_EQ(d["shards"], 2);
  EXPECT_EQ(d["total_bytes"], 1234);
  ASSERT_EQ(d["why_incomplete"].size(), 1u) << d.dump();
  EXPECT_NE(d["why_incomplete"][0].get<std::string>().find("gone.arrow: its size cannot be read"),
            std::string::npos);
  // Built in memory: no file, no size; no row count: unknown.
  lib["locations"] = json::array();
  lib["settings"] = json::object();
  const json memory = job_dataset(description({{"library", lib}})).data;
  EXPECT_TRUE(memory["total_bytes"].is_null());
  EXPECT_TRUE(memory["samples"].is_null());
  EXPECT_EQ(memory["why_incomplete"].size(), 2u) << memory.dump();
}

TEST(JobConfig, AnImageFolderRootIsOpenedLikeMmprofsOwnDatasetWithItsDataMix) {
  test::TempDir dir;
  const auto root = dir.path() / "train";
  std::filesystem::create_directories(root / "cat");
  std::filesystem::create_directories(root / "dog");
  const std::vector<uint8_t> small = test::progressive_jpeg(64, 48, 0),
                             large = test::progressive_jpeg(128, 96, 0);
  const auto write = [](const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  };
  write(root / "cat" / "1.jpg", small);
  write(root / "cat" / "2.jpg", small);
  write(root / "dog" / "3.jpg", large);
  const JobDataset d =
      job_dataset(description({{"dataset", "ImageFolder"}, {"dataset_root", root.string()}}));
  EXPECT_EQ(d.data["layout"], "files");
  EXPECT_EQ(d.data["root_of"], "ImageFolder");
  EXPECT_EQ(d.data["samples"], 3);
  EXPECT_EQ(d.data["total_bytes"], 2 * small.size() + large.size());
  EXPECT_EQ(d.data["per_extension"]["jpg"], 3);
  // The data mix from the files' headers: two 64x48, one 128x96.
  ASSERT_TRUE(d.data_mix.is_object());
  EXPECT_EQ(d.data_mix["images"]["formats"]["jpeg"], 3) << d.data_mix.dump();
  EXPECT_EQ(d.data_mix["images"]["resolutions"]["64x48"], 2) << d.data_mix.dump();
  EXPECT_EQ(d.data_mix["images"]["resolutions"]["128x96"], 1) << d.data_mix.dump();
  EXPECT_TRUE(d.data_reason.empty());
  // A root that holds no sample: said, nothing made up.
  std::filesystem::create_directories(dir.path() / "empty");
  const JobDataset none = job_dataset(
      description({{"dataset", "ImageFolder"}, {"dataset_root", (dir.path() / "empty").string()}}));
  EXPECT_TRUE(none.data.is_null());
  EXPECT_NE(none.data_reason.find("the ImageFolder root " + (dir.path() / "empty").string() +
                                  " is not a dataset mmprof reads"),
            std::string::npos)
      << none.data_reason;
}

}  // namespace
}  // namespace mmprof::external
