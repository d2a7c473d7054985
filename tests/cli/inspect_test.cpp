// `mmprof inspect` end to end: every inventory block present, JSON to --out and to stdout, a bad
// --data exits 3 naming it, and baseline's manifest carries the same blocks.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::read_json;

namespace fs = std::filesystem;
using nlohmann::json;

class InspectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    const auto r = test::run_mmprof("gen --out " + test::shell_quote(dir_->path() / "ds") +
                                    " --images 8 --videos 2 --video-min-s 1 --video-max-s 1.5 "
                                    "--video-max-height 360 --threads 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path data() { return dir_->path() / "ds/files"; }
  static test::TempDir* dir_;
};
test::TempDir* InspectTest::dir_ = nullptr;

const char* const kInventoryKeys[] = {"/schema",
                                      "/created_utc",
                                      "/run/command",
                                      "/run/cwd",
                                      "/run/environment",
                                      "/run/mmprof/version",
                                      "/run/mmprof/commit",
                                      "/run/mmprof/dirty",
                                      "/repo/path",
                                      "/repo/git",
                                      "/software/compiler",
                                      "/software/libc",
                                      "/software/kernel",
                                      "/software/distribution",
                                      "/software/ffmpeg/version",
                                      "/software/libjpeg_turbo",
                                      "/software/libarchive/version",
                                      "/software/cuda/runtime",
                                      "/software/cuda/driver",
                                      "/software/cupti",
                                      "/software/libtorch",
                                      "/hardware/cpu/model",
                                      "/hardware/cpu/sockets",
                                      "/hardware/cpu/cores",
                                      "/hardware/cpu/threads",
                                      "/hardware/numa_nodes",
                                      "/hardware/caches",
                                      "/hardware/memory/total_mib",
                                      "/hardware/gpus",
                                      "/hardware/gpu_unavailable_reason",
                                      "/storage/path",
                                      "/storage/mount_point",
                                      "/storage/fs_type",
                                      "/storage/rotational",
                                      "/storage/model",
                                      "/network/interfaces",
                                      "/network/counters",
                                      "/data_mix/counts/images",
                                      "/data_mix/bytes/total",
                                      "/data_mix/sampling/probed",
                                      "/data_mix/images/megapixels_histogram",
                                      "/data_mix/videos/duration_s",
                                      "/data_mix/videos/codecs",
                                      "/data_mix/captions/words/p90"};

TEST_F(InspectTest, WritesEveryKeyToOut) {
  test::TempDir out;
  const fs::path file = out.path() / "inv.json";
  const auto r =
      test::run_mmprof("inspect --data " + test::shell_quote(data()) + " --out " +
                       test::shell_quote(file) + " --repo " + test::shell_quote(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json inv = read_json(file);
  for (const char* key : kInventoryKeys)
    EXPECT_TRUE(inv.contains(json::json_pointer(key))) << key;
  EXPECT_EQ(inv["schema"], "mmprof.inventory/2");
  EXPECT_EQ(inv["repo"]["git"], false);  // a temp folder is no repository: said, not an error
  EXPECT_EQ(inv["data_mix"]["counts"]["images"], 8);
  EXPECT_EQ(inv["data_mix"]["counts"]["videos"], 2);
  // The tables name each section.
  for (const char* section :
       {"repository", "software", "hardware", "storage", "network", "data mix"}) {
    EXPECT_NE(r.output.find(section), std::string::npos) << section;
  }
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
}

TEST_F(InspectTest, JsonToStdoutAndEnvironmentRecorded) {
  const auto r = test::run_command(
      "OMP_NUM_THREADS=3 MALLOC_ARENA_MAX=2 HOME_X=1 " + test::shell_quote(test::mmprof_bin()) +
      " inspect --json --data " + test::shell_quote(data()) + " 2>/dev/null </dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json inv = json::parse(r.output);
  EXPECT_EQ(inv["run"]["environment"]["OMP_NUM_THREADS"], "3");
  EXPECT_EQ(inv["run"]["environment"]["MALLOC_ARENA_MAX"], "2");
  EXPECT_FALSE(inv["run"]["environment"].contains("HOME_X"));
}

TEST_F(InspectTest, ProbeStorageReportsBothPatternsAndTheCacheState) {
  const auto r =
      test::run_mmprof("inspect --json --probe-storage --data " + test::shell_quote(data()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json p = json::parse(r.output)["storage"]["probe"];
  uint64_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(data()))
    on_disk += fs::file_size(e.path());
  if (p["sequential"]["stopped_by"] != "time limit") {
    EXPECT_EQ(p["sequential"]["bytes"], on_disk);  // a small dataset is read whole
  }
  EXPECT_GT(p["random_4k"]["ops"].get<int64_t>(), 0);
  // The same reads with 16 in flight (all of them, unless a pass ran out of time), 4 KiB each.
  EXPECT_EQ(p["random_4k_qd"]["queue_depth"], 16);
  if (p["random_4k"]["stopped_by"] != "time limit" &&
      p["random_4k_qd"]["stopped_by"] != "time limit") {
    EXPECT_EQ(p["random_4k_qd"]["ops"], p["random_4k"]["ops"]);
  }
  EXPECT_EQ(p["random_4k_qd"]["bytes"].get<int64_t>(),
            4096 * p["random_4k_qd"]["ops"].get<int64_t>());
  for (const char* pattern : {"sequential", "random_4k", "random_4k_qd"}) {
    const std::string cache = p[pattern]["cache"];
    EXPECT_TRUE(cache == "cold" || cache == "warm") << cache;
  }
  EXPECT_TRUE(p["cache_method"] == "drop_caches" || p["cache_method"] == "fadvise");
}

TEST_F(InspectTest, BadDataExitsThreeNamingIt) {
  const auto r = test::run_mmprof("inspect --data /no/such/dataset-dir");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("/no/such/dataset-dir"), std::string::npos) << r.output;
}

TEST_F(InspectTest, ProbeStorageWithoutDataIsAUsageError) {
  const auto r = test::run_mmprof("inspect --probe-storage");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--data"), std::string::npos) << r.output;
}

TEST_F(InspectTest, BaselineManifestEmbedsTheInventoryBlocks) {
  test::TempDir out;
  const auto r = test::run_mmprof("baseline --data " + test::shell_quote(data()) + " --out " +
                                  test::shell_quote(out.path() / "run") + " --repo " +
                                  test::shell_quote(test::source_dir()) +
                                  " --set phases.steps=2 --set phases.warmup_steps=1 "
                                  "--set loader.batch_size=2 --set loader.num_workers=1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json m = read_json(out.path() / "run/manifest.json");
  for (const char* key :
       {"/command", "/cwd", "/mmprof/commit", "/config", "/baseline_spec", "/environment",
        "/repo/git", "/software/ffmpeg", "/hardware/cpu", "/storage/fs_type", "/network/interfaces",
        "/network/during_run/rx_bytes", "/data_mix/counts/samples"}) {
    EXPECT_TRUE(m.contains(json::json_pointer(key))) << key;
  }
  EXPECT_EQ(m["repo"]["git"], true);
  EXPECT_EQ(m["data_mix"]["counts"]["samples"], 10);
  EXPECT_GE(m["network"]["during_run"]["window_s"].get<double>(), 0.0);
}

}  // namespace
}  // namespace mmprof
