// The env layer against the real machine and real tools: repository facts on a git repository
// made here, the data mix of a generated dataset cross-checked with ffprobe and the files on
// disk, and the storage block against findmnt.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "data/data_mix.hpp"
#include "env/repo_info.hpp"
#include "env/storage.hpp"
#include "gen/generator.hpp"
#include "mmprof/dataset.hpp"
#include "probe/host_files.hpp"
#include "support/test_support.hpp"

namespace mmprof::env {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string trimmed(const std::string& s) {
  return s.substr(0, s.find_last_not_of(" \n") + 1);
}

void sh(const std::string& cmd) {
  const auto r = test::run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
}

TEST(EnvRepoInfo, CommitsBranchDirtyAndLog) {
  test::TempDir dir;
  // A quote in the path: git is run with an argument vector, never through a shell.
  const fs::path repo = dir.path() / "my 'repo'";
  fs::create_directories(repo);
  const std::string git =
      "git -C " + test::shell_quote(repo) + " -c user.name=t -c user.email=t@e ";
  sh(git + "init -q -b work");
  sh("echo a > " + test::shell_quote(repo / "a.txt"));
  sh(git + "add a.txt && " + git + "commit -q -m 'first commit'");
  sh("echo b > " + test::shell_quote(repo / "a.txt"));
  sh(git + "commit -q -am 'second: with | and \"quotes\"'");
  const json r = repo_info(repo);
  ASSERT_EQ(r["git"], true) << r.dump();
  EXPECT_EQ(r["head"], trimmed(test::run_command(git + "rev-parse HEAD").output));
  EXPECT_EQ(r["branch"], "work");
  EXPECT_EQ(r["dirty"], false);
  ASSERT_EQ(r["log"].size(), 2u);
  EXPECT_EQ(r["log"][0]["hash"], r["head"]);
  EXPECT_EQ(r["log"][0]["subject"], "second: with | and \"quotes\"");
  EXPECT_EQ(r["log"][1]["subject"], "first commit");
  EXPECT_EQ(r["log"][0]["date"].get<std::string>().size(), 25u);  // 2024-05-01T10:00:00+02:00

  sh("echo c > " + test::shell_quote(repo / "new.txt"));  // untracked counts as dirty
  const json d = repo_info(repo);
  EXPECT_EQ(d["dirty"], true);
  EXPECT_EQ(d["dirty_files"], 1);
  EXPECT_FALSE(fs::exists(repo / ".git/index.lock"));
}

TEST(EnvRepoInfo, NotARepositoryIsNotAnError) {
  test::TempDir dir;
  const json r = repo_info(dir.path());
  EXPECT_EQ(r["git"], false);
  EXPECT_EQ(r["path"], dir.path().string());
  EXPECT_FALSE(r["reason"].get<std::string>().empty());
  EXPECT_FALSE(r.contains("head"));
}

class EnvDataMix : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    GenOptions g;
    g.out = dir_->path() / "ds";
    g.images = 16;
    g.videos = 3;
    g.video_min_s = 1;
    g.video_max_s = 2;
    g.video_max_height = 360;
    g.write_shards = true;
    g.threads = 2;
    dataset_json_ = new json(generate_dataset(g));
  }
  static void TearDownTestSuite() {
    delete dataset_json_;
    delete dir_;
  }
  static fs::path files() { return dir_->path() / "ds/files"; }
  static test::TempDir* dir_;
  static json* dataset_json_;
};
test::TempDir* EnvDataMix::dir_ = nullptr;
json* EnvDataMix::dataset_json_ = nullptr;

TEST_F(EnvDataMix, CountsAndBytesMatchTheFilesOnDisk) {
  const json m = data_mix(Dataset::open(files(), Layout::files));
  EXPECT_EQ(m["counts"]["images"], 16);
  EXPECT_EQ(m["counts"]["videos"], 3);
  EXPECT_EQ(m["counts"]["captions"], 19);
  uint64_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(files()))
    on_disk += fs::file_size(e.path());
  EXPECT_EQ(m["bytes"]["total"], on_disk);
  EXPECT_EQ(m["sampling"]["probed"], 19);
  EXPECT_EQ(m["sampling"]["method"], "all samples");
  EXPECT_EQ(m["errors"]["count"], 0);
  // The generator's own record of what it wrote.
  const json& d = *dataset_json_;
  EXPECT_EQ(m["images"]["formats"]["jpeg"], d["counts"]["image"]["jpg"]);
  EXPECT_EQ(m["images"]["formats"].value("png", 0), d["counts"]["image"]["png"]);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(m["images"]["megapixels_histogram"][i]["count"],
              d["images"]["megapixels_histogram"][i]["count"]);
  }
  EXPECT_EQ(m["videos"]["resolutions"], d["videos"]["resolutions"]);
  EXPECT_EQ(m["captions"]["words"]["max"], d["captions"]["words"]["max"]);
}

TEST_F(EnvDataMix, VideoFactsMatchFfprobe) {
  const json m = data_mix(Dataset::open(files(), Layout::files));
  std::map<std::string, int64_t> resolutions, codecs;
  double frames_max = 0;
  for (const auto& e : fs::directory_iterator(files())) {
    if (e.path().extension() != ".mp4") continue;
    const auto r = test::run_command(
        "ffprobe -v error -select_streams v:0 -show_entries "
        "stream=width,height,codec_name,nb_frames -of json " +
        test::shell_quote(e.path()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json s = json::parse(r.output)["streams"][0];
    ++resolutions[std::to_string(s["width"].get<int>()) + "x" +
                  std::to_string(s["height"].get<int>())];
    ++codecs[s["codec_name"].get<std::string>()];
    frames_max = std::max(frames_max, std::stod(s["nb_frames"].get<std::string>()));
  }
  EXPECT_EQ(m["videos"]["resolutions"], json(resolutions));
  EXPECT_EQ(m["videos"]["codecs"], json(codecs));
  EXPECT_EQ(m["videos"]["frames"]["max"].get<double>(), frames_max);
}

TEST_F(EnvDataMix, TarLayoutGivesTheSameMixAndSamplingIsStated) {
  const json a = data_mix(Dataset::open(files(), Layout::files));
  const json b = data_mix(Dataset::open(dir_->path() / "ds/shards", Layout::tar));
  for (const char* k : {"images", "videos", "captions", "counts"})
    EXPECT_EQ(a[k], b[k]) << k;
  const json s = data_mix(Dataset::open(files(), Layout::files), 5, 3);
  EXPECT_EQ(s["sampling"]["probed"], 5);
  EXPECT_EQ(s["sampling"]["of"], 19);
  EXPECT_EQ(s["sampling"]["seed"], 3);
  EXPECT_EQ(s["counts"]["samples"], 19);  // counts stay whole-dataset
  const int probed = s["images"]["probed"].get<int>() + s["videos"]["probed"].get<int>();
  EXPECT_EQ(probed, 5);
}

TEST(EnvStorageLive, FilesystemTypeMatchesFindmnt) {
  test::TempDir dir;
  const fs::path path = fs::canonical(dir.path());
  const json s = storage_info(procfs::HostFiles(), path.string());
  const auto r = test::run_command("findmnt -no FSTYPE,TARGET --target " + test::shell_quote(path));
  if (r.exit_code != 0) MMPROF_SKIP_WITHOUT("findmnt", "findmnt unavailable: " << r.output);
  const std::string out = trimmed(r.output);
  EXPECT_EQ(s["fs_type"], out.substr(0, out.find(' ')));
  EXPECT_EQ(s["mount_point"], out.substr(out.find_last_of(' ') + 1));
}

}  // namespace
}  // namespace mmprof::env
