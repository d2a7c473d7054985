// Tests of the synthetic dataset generator (src/data/gen): layouts, determinism, formats.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gen/captions.hpp"
#include "gen/generator.hpp"
#include "gen/sample_plan.hpp"
#include "support/test_support.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

using test::read_json;

namespace fs = std::filesystem;
using nlohmann::json;
using test::read_bytes;
using test::run_command;
using test::TempDir;

GenOptions small_options(const fs::path& out) {
  GenOptions o;
  o.out = out;
  o.seed = 3;
  o.images = 6;
  o.videos = 2;
  o.png_fraction = 0.17;  // one PNG
  o.video_min_s = o.video_max_s = 1.0;
  o.video_max_height = 360;
  o.write_shards = true;
  o.shard_bytes = 200 << 10;
  o.threads = 2;
  return o;
}

// (member name, bytes) of every member of a tar file, in order.
std::vector<std::pair<std::string, std::vector<uint8_t>>> tar_members(const fs::path& tar) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> members;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  EXPECT_EQ(archive_read_open_filename(a, tar.c_str(), 1 << 16), ARCHIVE_OK) << tar;
  archive_entry* entry = nullptr;
  while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
    std::vector<uint8_t> data(static_cast<size_t>(archive_entry_size(entry)));
    if (!data.empty()) archive_read_data(a, data.data(), data.size());
    members.emplace_back(archive_entry_pathname(entry), std::move(data));
  }
  archive_read_free(a);
  return members;
}

std::vector<std::string> sorted_files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(GenPlan, KindsAreExactAndInterleaved) {
  GenOptions o;
  o.images = 100, o.videos = 10, o.png_fraction = 0.1;
  const auto kinds = gen::plan_kinds(o);
  ASSERT_EQ(kinds.size(), 110u);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), gen::SampleKind::mp4), 10);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), gen::SampleKind::png), 10);
  // Not all videos at one end: a sequential read sees a mix.
  const auto first = std::find(kinds.begin(), kinds.end(), gen::SampleKind::mp4) - kinds.begin();
  EXPECT_LT(first, 100);
  EXPECT_EQ(gen::sample_key(42, 110), "000042");
  EXPECT_EQ(gen::sample_key(42, 12345678), "00000042");
}

TEST(GenPlan, CaptionsHaveBoundedLongTailedLengths) {
  Rng rng(1);
  int long_ones = 0;
  for (int i = 0; i < 500; ++i) {
    const std::string c =
        gen::make_caption(rng, {i % 2 == 0, "red", "blue", 2, true}, gen::draw_caption_words(rng));
    const int n = gen::count_words(c);
    EXPECT_GE(n, 5) << c;
    EXPECT_LE(n, 60) << c;
    EXPECT_EQ(c.back(), '.');
    long_ones += n > 40;
  }
  EXPECT_GT(long_ones, 10);
  EXPECT_LT(long_ones, 200);
}

TEST(GenDataset, SmallDatasetHasBothLayouts) {
  TempDir tmp;
  const json doc = generate_dataset(small_options(tmp.path()));
  const json disk = read_json(tmp.path() / "dataset.json");
  EXPECT_EQ(json::parse(json_text(doc)), disk);  // every JSON file's figures without binary noise
  EXPECT_EQ(disk["schema"], "mmprof.dataset/1");
  EXPECT_EQ(disk["counts"]["image"]["jpg"], 5);
  EXPECT_EQ(disk["counts"]["image"]["png"], 1);
  EXPECT_EQ(disk["counts"]["video"]["mp4"], 2);

  const auto kinds = gen::plan_kinds(small_options(tmp.path()));
  std::vector<std::string> expected;  // member order: <key>.<ext>, <key>.txt, by key
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string key = gen::sample_key(static_cast<int>(i), 8);
    expected.push_back(key + "." + gen::extension(kinds[i]));
    expected.push_back(key + ".txt");
  }
  std::vector<std::string> in_files = expected;
  std::sort(in_files.begin(), in_files.end());
  EXPECT_EQ(sorted_files(tmp.path() / "files"), in_files);

  std::vector<std::string> in_shards;
  int samples = 0;
  for (const auto& shard : disk["layouts"]["shards"]["shards"]) {
    const fs::path path = tmp.path() / "shards" / shard["name"].get<std::string>();
    EXPECT_EQ(fs::file_size(path), shard["bytes"].get<uint64_t>());
    samples += shard["samples"].get<int>();
    for (const auto& [name, data] : tar_members(path)) {
      in_shards.push_back(name);
      EXPECT_EQ(data, read_bytes(tmp.path() / "files" / name)) << name;
    }
  }
  EXPECT_EQ(in_shards, expected);
  EXPECT_EQ(samples, 8);
  EXPECT_GT(disk["layouts"]["shards"]["count"].get<int>(), 1);  // 200 KiB shards roll over
}

TEST(GenDataset, SameSeedSameBytesAnyThreadCount) {
  TempDir a, b, c;
  GenOptions o = small_options(a.path());
  o.threads = 1;
  const json ja = generate_dataset(o);
  o.out = b.path(), o.threads = 2;
  const json jb = generate_dataset(o);
  EXPECT_EQ(ja["counts"], jb["counts"]);
  EXPECT_EQ(ja["bytes"], jb["bytes"]);
  for (const auto& name : sorted_files(a.path() / "files"))
    EXPECT_EQ(read_bytes(a.path() / "files" / name), read_bytes(b.path() / "files" / name)) << name;
  EXPECT_EQ(read_bytes(a.path() / "shards" / "shard-000000.tar"),
            read_bytes(b.path() / "shards" / "shard-000000.tar"));

  o.out = c.path(), o.seed = 4;
  const json jc = generate_dataset(o);
  EXPECT_NE(jc["bytes"], ja["bytes"]);
  EXPECT_NE(read_bytes(a.path() / "files" / "000000.txt"),
            read_bytes(c.path() / "files" / "000000.txt"));
}

TEST(GenDataset, JpegsAre420WithPhotoLikeEntropy) {
  TempDir tmp;
  GenOptions o = small_options(tmp.path());
  o.images = 40, o.videos = 0, o.png_fraction = 0, o.write_shards = false;
  generate_dataset(o);
  tjhandle tj = tjInitDecompress();
  double sum_bpp = 0;
  int n = 0;
  for (const auto& name : sorted_files(tmp.path() / "files")) {
    if (name.ends_with(".txt")) continue;
    auto bytes = read_bytes(tmp.path() / "files" / name);
    int w = 0, h = 0, subsamp = -1, colorspace = -1;
    ASSERT_EQ(tjDecompressHeader3(tj, bytes.data(), bytes.size(), &w, &h, &subsamp, &colorspace),
              0);
    EXPECT_EQ(subsamp, TJSAMP_420) << name;
    EXPECT_GE(w, 320);
    EXPECT_LE(w, 1920);
    const double bpp = double(bytes.size()) / (double(w) * h);
    // Measured 0.06-0.26 B/px (mean ~0.15) at quality 85-92; flat patterns give < 0.03.
    EXPECT_GT(bpp, 0.04) << name;
    EXPECT_LT(bpp, 0.5) << name;
    sum_bpp += bpp, ++n;
  }
  tjDestroy(tj);
  ASSERT_EQ(n, 40);
  EXPECT_GT(sum_bpp / n, 0.1);
  EXPECT_LT(sum_bpp / n, 0.3);
}

// Every codec of --video-codec: the stream ffprobe sees, and a keyframe exactly every
// keyframe_interval_s (from the packets' key flags, which every codec sets).
class GenCodecTest : public ::testing::TestWithParam<std::pair<VideoCodec, const char*>> {};

TEST_P(GenCodecTest, Mp4HasTheCodecAndRegularKeyframes) {
  const auto [codec, name] = GetParam();
  TempDir tmp;
  GenOptions o = small_options(tmp.path());
  o.images = 0, o.videos = 1, o.video_min_s = o.video_max_s = 5.0, o.write_shards = false;
  o.video_codec = codec;
  const json doc = generate_dataset(o);
  EXPECT_EQ(doc["videos"]["codec"], name);
  EXPECT_EQ(doc["generator"]["video_codec"].get<std::string>().rfind(name, 0), 0u);
  const int fps = std::stoi(doc["videos"]["fps"].items().begin().key());
  const int keyint = std::stoi(doc["videos"]["keyframe_interval_s"].items().begin().key());
  const std::string file = (tmp.path() / "files" / "000000.mp4").string();

  auto probe = run_command(
      "ffprobe -v error -select_streams v -show_entries "
      "stream=codec_name,pix_fmt,r_frame_rate,width,height,nb_frames -of json '" +
      file + "'");
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  const json stream = json::parse(probe.output)["streams"][0];
  EXPECT_EQ(stream["codec_name"], name);
  EXPECT_EQ(stream["pix_fmt"], "yuv420p");
  EXPECT_EQ(stream["r_frame_rate"], std::to_string(fps) + "/1");
  EXPECT_EQ(stream["width"], 640);
  EXPECT_EQ(stream["height"], 360);
  EXPECT_EQ(stream["nb_frames"], std::to_string(5 * fps));

  auto packets = run_command(
      "ffprobe -v error -select_streams v -show_entries packet=pts_time,flags -of csv=p=0 '" +
      file + "'");
  ASSERT_EQ(packets.exit_code, 0) << packets.output;
  std::vector<double> times;  // "pts_time,flags" per packet; K marks a keyframe
  std::istringstream in(packets.output);
  for (std::string line; std::getline(in, line);) {
    const auto comma = line.find(',');
    if (comma == std::string::npos || line.find('K', comma) == std::string::npos) continue;
    times.push_back(std::stod(line.substr(0, comma)));
  }
  std::sort(times.begin(), times.end());
  std::vector<double> expected;
  for (int t = 0; t < 5; t += keyint)
    expected.push_back(t);
  ASSERT_EQ(times.size(), expected.size()) << packets.output;
  for (size_t i = 0; i < times.size(); ++i)
    EXPECT_NEAR(times[i], expected[i], 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Codecs, GenCodecTest,
                         ::testing::Values(std::make_pair(VideoCodec::h264, "h264"),
                                           std::make_pair(VideoCodec::vp9, "vp9"),
                                           std::make_pair(VideoCodec::mpeg4, "mpeg4")),
                         [](const auto& param_info) {
                           return std::string(param_info.param.second);
                         });

TEST(GenDataset, UnwritableOutputNamesThePath) {
  TempDir tmp;
  test::write_bytes(tmp.path() / "plain-file", {1});
  GenOptions o = small_options(tmp.path() / "plain-file" / "out");
  try {
    generate_dataset(o);
    FAIL() << "expected OutputError";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("plain-file"), std::string::npos) << e.what();
  }
}

TEST(GenDefault, ReusesACompleteCache) {
  TempDir tmp;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", tmp.path().c_str(), 1);
  const fs::path dir = default_dataset_dir();
  EXPECT_EQ(dir, tmp.path() / "mmprof" / "default-v1");
  fs::create_directories(dir);
  std::ofstream(dir / "dataset.json") << "{}";
  EXPECT_EQ(ensure_default_dataset(), dir);  // no generation: dataset.json marks it complete
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace mmprof
