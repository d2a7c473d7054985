// StageBreakdown: stage times by sample class (format or codec, modality, source-resolution
// bucket) from hand-built samples, with exact values.
#include "run/stage_breakdown.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rundir/summary_parts.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

SampleInfo sample(Modality m, const std::string& format, int w, int h, double read, double decode,
                  double augment, uint64_t bytes = 100) {
  return test::sample_info({.modality = m,
                            .format = format,
                            .width = w,
                            .height = h,
                            .read_ms = read,
                            .decode_ms = decode,
                            .augment_ms = augment,
                            .bytes = bytes});
}

const json& entry(const json& list, const std::string& cls) {
  return test::with_class(list, cls);
}

TEST(StageBreakdown, ResolutionBucketsAreInclusiveUpperBoundsInMegapixels) {
  EXPECT_EQ(resolution_bucket(1000, 500), "<=0.5 MP");
  EXPECT_EQ(resolution_bucket(1000, 501), "<=2 MP");
  EXPECT_EQ(resolution_bucket(2000, 1000), "<=2 MP");
  EXPECT_EQ(resolution_bucket(4000, 2000), "<=8 MP");
  EXPECT_EQ(resolution_bucket(4000, 2001), ">8 MP");
  EXPECT_EQ(resolution_bucket(0, 0), "unknown");
  EXPECT_EQ(sample_class(sample(Modality::image, "webp", 4096, 4096, 0, 0, 0)),
            "webp images >8 MP");
  EXPECT_EQ(sample_class(sample(Modality::video, "h264", 1920, 1080, 0, 0, 0)),
            "h264 videos <=8 MP");
  EXPECT_EQ(sample_class(sample(Modality::image, "", 0, 0, 0, 0, 0)), "unknown images unknown");
}

TEST(StageBreakdown, NoSampleIsNull) {
  EXPECT_FALSE(StageBreakdown().figures("pipeline").has_value());
  EXPECT_EQ(StageBreakdown().slowest_class(), "");
}

// Four small JPEGs (decode 10 ms each), one huge WebP (decode 100 ms) and two H.264 clips (decode
// 30 ms each): the WebP is the slowest per sample and takes the largest share of decode (100 of
// 200 ms). The next test separates the two.
TEST(StageBreakdown, EachDimensionCountsItsSamplesAndNamesTheSlowestClass) {
  StageBreakdown b;
  for (int i = 0; i < 4; ++i)
    b.add(sample(Modality::image, "jpeg", 640, 480, 1, 10, 2, 1000));
  b.add(sample(Modality::image, "webp", 4096, 4096, 4, 100, 6, 5000));
  b.add(sample(Modality::video, "h264", 640, 360, 2, 30, 1, 2000));
  b.add(sample(Modality::video, "h264", 1280, 720, 2, 30, 1, 2000));
  const json j = rundir::to_json(*b.figures("pipeline"));
  EXPECT_EQ(j["phase"], "pipeline");
  EXPECT_EQ(j["samples"], 7);
  EXPECT_DOUBLE_EQ(j["decode_ms_total"].get<double>(), 200);
  EXPECT_EQ(j["resolution_buckets_megapixels"], json({0.5, 2.0, 8.0}));

  const json& image = entry(j["by_modality"], "image");
  EXPECT_EQ(image["samples"], 5);
  EXPECT_EQ(image["bytes"], 9000);
  EXPECT_DOUBLE_EQ(image["decode_ms_mean"].get<double>(), 140.0 / 5);
  EXPECT_DOUBLE_EQ(image["decode_share"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(image["read_ms_mean"].get<double>(), 8.0 / 5);
  EXPECT_DOUBLE_EQ(image["augment_ms_mean"].get<double>(), 14.0 / 5);
  EXPECT_EQ(entry(j["by_modality"], "video")["samples"], 2);

  EXPECT_EQ(j["by_format"].size(), 3u);
  EXPECT_EQ(j["by_format"][0]["class"], "webp");  // slowest decode first
  EXPECT_EQ(entry(j["by_format"], "jpeg")["samples"], 4);
  EXPECT_EQ(entry(j["by_format"], "h264")["samples"], 2);
  EXPECT_DOUBLE_EQ(entry(j["by_format"], "h264")["decode_ms_p50"].get<double>(), 30);

  // 640x480 = 0.31 MP, 640x360 = 0.23 MP, 1280x720 = 0.92 MP, 4096x4096 = 16.8 MP.
  EXPECT_EQ(entry(j["by_resolution"], "<=0.5 MP")["samples"], 5);
  EXPECT_EQ(entry(j["by_resolution"], "<=2 MP")["samples"], 1);
  EXPECT_EQ(entry(j["by_resolution"], ">8 MP")["samples"], 1);

  EXPECT_EQ(j["by_class"].size(), 4u);
  const json& webp = entry(j["by_class"], "webp images >8 MP");
  EXPECT_EQ(webp["modality"], "image");
  EXPECT_EQ(webp["format"], "webp");
  EXPECT_EQ(webp["resolution"], ">8 MP");
  EXPECT_NEAR(webp["source_megapixels_mean"].get<double>(), 4096.0 * 4096 / 1e6, 1e-9);

  const json& slow = j["slowest"]["by_mean_decode"];
  EXPECT_EQ(slow["class"], "webp images >8 MP");
  EXPECT_DOUBLE_EQ(slow["rest_decode_ms_mean"].get<double>(), 100.0 / 6);
  EXPECT_DOUBLE_EQ(slow["times_rest"].get<double>(), 6.0);
  EXPECT_EQ(j["slowest"]["by_decode_share"]["class"], "webp images >8 MP");
  EXPECT_EQ(b.slowest_class(), "webp images >8 MP");
}

TEST(StageBreakdown, TheSlowestPerSampleAndTheLargestShareCanDiffer) {
  StageBreakdown b;
  for (int i = 0; i < 20; ++i)
    b.add(sample(Modality::image, "jpeg", 1920, 1080, 1, 20, 2));  // 400 ms in all
  b.add(sample(Modality::image, "png", 3000, 3000, 1, 150, 2));    // 150 ms
  const json j = rundir::to_json(*b.figures("pipeline"));
  EXPECT_EQ(j["slowest"]["by_mean_decode"]["class"], "png images >8 MP");
  EXPECT_EQ(j["slowest"]["by_decode_share"]["class"], "jpeg images <=8 MP");
  EXPECT_DOUBLE_EQ(j["slowest"]["by_decode_share"]["decode_share"].get<double>(), 400.0 / 550);
}

}  // namespace
}  // namespace mmprof
