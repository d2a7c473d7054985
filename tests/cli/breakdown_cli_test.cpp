// Issue 15, items 4 and 5, end to end: the per-class stage breakdown on a mixed dataset with a
// planted slow class (two 12 MP WebP sources beside mmprof gen's small JPEG/PNG images, H.264
// clips and one VP9 clip made with the ffmpeg CLI), and each loader worker's load when full and
// short batches are dealt in turn. Counts are checked against the files on disk and stages.csv.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::shell_quote;

// The format (image) or codec (video) each extension of the dataset holds.
const std::map<std::string, std::string> kFormatOf = {
    {".jpg", "jpeg"}, {".png", "png"}, {".webp", "webp"}, {".mp4", "h264"}, {".webm", "vp9"}};

// The stated source-resolution buckets, recomputed here from stages.csv's source sizes.
std::string bucket(int w, int h) {
  const double mp = static_cast<double>(w) * h / 1e6;
  return mp <= 0.5 ? "<=0.5 MP" : mp <= 2 ? "<=2 MP" : mp <= 8 ? "<=8 MP" : ">8 MP";
}

const json& entry(const json& list, const std::string& cls) {
  return test::with_class(list, cls);
}

class BreakdownCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    const fs::path ds = dir_->path() / "mixed";
    setup_ = test::run_mmprof("gen --out " + shell_quote(ds) +
                              " --images 8 --videos 2 --png-fraction 0.5 --video-max-s 1 "
                              "--video-max-height 360 --layout files --seed 7");
    if (setup_.exit_code != 0) return;
    const fs::path files = ds / "files";
    const std::string ffmpeg = "ffmpeg -hide_banner -loglevel error -y -f lavfi -i ";
    setup_ = test::run_command(
        ffmpeg + "testsrc2=size=4000x3000 -frames:v 1 -c:v libwebp -compression_level 0 " +
        "-quality 30 " + shell_quote(files / "big0.webp") + " && cp " +
        shell_quote(files / "big0.webp") + " " + shell_quote(files / "big1.webp") + " && " +
        ffmpeg + "testsrc2=size=320x240:rate=10 -t 1 -c:v libvpx-vp9 -deadline realtime " +
        "-cpu-used 8 -b:v 200k " + shell_quote(files / "clip9.webm") + " 2>&1");
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void SetUp() override { ASSERT_EQ(setup_.exit_code, 0) << setup_.output; }

  static fs::path files() { return dir_->path() / "mixed" / "files"; }

  static std::unique_ptr<test::TempDir> dir_;
  static test::CommandResult setup_;
};

std::unique_ptr<test::TempDir> BreakdownCli::dir_;
test::CommandResult BreakdownCli::setup_;

// One epoch exactly (13 samples, batches of 4, no warm-up): every file is one row of stages.csv
// and one sample of the breakdown.
TEST_F(BreakdownCli, EveryFileIsCountedInItsClassAndThePlantedSlowClassIsNamed) {
  std::map<std::string, std::string> format_of_key;
  std::map<std::string, int> files_by_format;
  for (const auto& e : fs::directory_iterator(files())) {
    const auto f = kFormatOf.find(e.path().extension().string());
    if (f == kFormatOf.end()) continue;  // captions
    format_of_key[e.path().stem().string()] = f->second;
    files_by_format[f->second]++;
  }
  ASSERT_EQ(format_of_key.size(), 13u);
  ASSERT_EQ(files_by_format["webp"], 2);
  ASSERT_EQ(files_by_format["vp9"], 1);

  const fs::path run = dir_->path() / "run-mixed";
  const auto r = test::run_mmprof(
      "baseline --data " + shell_quote(files()) +
      " --set loader.batch_size=4 --set phases.steps=4 --set phases.warmup_steps=0 "
      "--set step.kind=none --out " +
      shell_quote(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = test::read_json(run / "summary.json");
  const json& b = s["stage_breakdown"];
  ASSERT_TRUE(b.is_object()) << s.dump(2);
  EXPECT_EQ(b["phase"], "pipeline");
  EXPECT_EQ(b["samples"], 13);
  for (const auto& [format, n] : files_by_format)
    EXPECT_EQ(entry(b["by_format"], format)["samples"], n) << format;
  EXPECT_EQ(b["by_format"].size(), files_by_format.size());
  EXPECT_EQ(entry(b["by_modality"], "image")["samples"], 10);
  EXPECT_EQ(entry(b["by_modality"], "video")["samples"], 3);

  // stages.csv: one row per file, its format the file's, the planted sources at their size; the
  // resolution buckets recomputed from its source sizes.
  const test::Csv stages = test::read_csv(run / "stages.csv");
  const size_t key = stages.column("key"), format = stages.column("format"),
               width = stages.column("source_width_px"), height = stages.column("source_height_px");
  std::set<std::string> keys;
  std::map<std::string, int> by_bucket;
  for (const auto& row : stages.rows) {
    keys.insert(row[key]);
    EXPECT_EQ(row[format], format_of_key[row[key]]) << row[key];
    const int w = std::stoi(row[width]), h = std::stoi(row[height]);
    if (row[key].rfind("big", 0) == 0) {
      EXPECT_EQ(w, 4000);
      EXPECT_EQ(h, 3000);
    }
    by_bucket[bucket(w, h)]++;
  }
  EXPECT_EQ(stages.rows.size(), 13u);
  EXPECT_EQ(keys.size(), 13u);
  EXPECT_EQ(b["by_resolution"].size(), by_bucket.size());
  for (const auto& [name, n] : by_bucket)
    EXPECT_EQ(entry(b["by_resolution"], name)["samples"], n) << name;
  EXPECT_EQ(entry(b["by_class"], "webp images >8 MP")["samples"], 2);

  // The planted class: 12 MP WebP sources decode far slower than everything else here.
  EXPECT_EQ(b["slowest"]["by_mean_decode"]["class"], "webp images >8 MP") << b.dump(2);
  EXPECT_EQ(b["slowest"]["by_decode_share"]["class"], "webp images >8 MP");
  EXPECT_NE(r.output.find("slowest class: webp images >8 MP"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("loader workers (pipeline phase):"), std::string::npos);

  // The report names it as a fact and recomputes the per-format counts from stages.csv.
  const fs::path report = dir_->path() / "report-mixed";
  const auto rep = test::run_mmprof("report " + shell_quote(run) + " --out " + shell_quote(report));
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  const json a = test::read_json(report / "report.json")["runs"][0];
  bool named = false;
  for (const auto& f : a["facts"]) {
    if (f["id"] == "stage.slowest_class")
      named = f["text"].get<std::string>().rfind("webp images >8 MP decode slowest", 0) == 0;
  }
  EXPECT_TRUE(named) << a["facts"].dump(2);
  int format_checks = 0;
  for (const auto& c : a["cross_checks"]) {
    EXPECT_EQ(c["ok"], true) << c.dump();
    format_checks += c["what"].get<std::string>().rfind("stage_breakdown.by_format", 0) == 0;
  }
  EXPECT_EQ(format_checks, 2 * static_cast<int>(files_by_format.size()));
}

// 13 images in batches of 12 over two workers dealt in turn: every epoch is a batch of 12
// (worker 0) and one of 1 (worker 1). Worker 0 does twelve times the work, so it is the busy one
// even on a loaded host (where a worker's busy time, being wall time, also grows with the wait
// for a CPU), and the cause is named as the batch sizes; per-worker samples and bytes equal
// stages.csv's.
TEST_F(BreakdownCli, FullAndShortBatchesDealtInTurnAreFlaggedWithTheirCause) {
  const fs::path ds = dir_->path() / "thirteen";
  auto r = test::run_mmprof("gen --out " + shell_quote(ds) +
                            " --images 13 --videos 0 --layout files --seed 11");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path run = dir_->path() / "run-thirteen";
  r = test::run_mmprof("baseline --data " + shell_quote(ds / "files") +
                       " --set loader.batch_size=12 --set loader.num_workers=2 "
                       "--set phases.steps=10 --set phases.warmup_steps=2 --set step.kind=none "
                       "--out " +
                       shell_quote(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json w = test::read_json(run / "summary.json")["workers_balance"];
  ASSERT_TRUE(w.is_object());
  ASSERT_EQ(w["workers"].size(), 2u);

  const test::Csv stages = test::read_csv(run / "stages.csv");
  std::map<int, int> rows;
  std::map<int, uint64_t> bytes;
  for (const auto& row : stages.rows) {
    const int worker = std::stoi(row[stages.column("worker")]);
    rows[worker]++;
    bytes[worker] += std::stoull(row[stages.column("bytes")]);
  }
  for (const auto& x : w["workers"]) {
    const int id = x["worker"];
    EXPECT_EQ(x["samples"], rows[id]) << id;
    EXPECT_EQ(x["bytes"], bytes[id]) << id;
    EXPECT_EQ(x["batches"], 5) << id;
    EXPECT_EQ(x["samples"], id == 0 ? 60 : 5) << id;
    EXPECT_NEAR(x["busy_ms"].get<double>(),
                x["stage_ms"].get<double>() + x["collate_ms"].get<double>(), 1e-6);
    // One process, counted inside the window only (its first batches were prefetched before).
    EXPECT_LE(x["busy_fraction"].get<double>(), 1 + 1e-9) << id;
  }
  EXPECT_TRUE(w["imbalanced"].get<bool>()) << w.dump(2);
  EXPECT_EQ(w["likely_cause_kind"], "batch_sizes") << w.dump(2);
  EXPECT_NE(r.output.find("likely cause: worker 0's batches hold 12.0 samples on average against "
                          "1.0 for the others: batches go to the workers in turn (round robin)"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace mmprof
