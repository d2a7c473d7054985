// Image and video decoding against the ffmpeg CLI's decode of the same files, DCT scaling, seeking
// and corrupt inputs. Fixtures are generated with the ffmpeg CLI into one temporary directory.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "decode/decode_budget.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "decode/video_decoder.hpp"
#include "support/jpeg_writer.hpp"
#include "support/test_support.hpp"
#include "transform/crop.hpp"
#include "transform/resize.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using test::ffmpeg_decode_rgb;
using test::psnr;
using test::read_bytes;

// Bounds from measurements with libjpeg-turbo 2.1.5 / FFmpeg 5.1 on these fixtures, with margin.
// JPEG against the ffmpeg CLI's default rgb24 conversion: 30.0 dB. libjpeg-turbo upsamples chroma
// with a triangle filter; swscale's default unscaled yuvj420p->rgb24 path replicates chroma
// samples, and testsrc2's saturated colour edges make that difference large. Against ffmpeg with
// full_chroma_int+accurate_rnd (interpolated chroma) the same decode measures 41.4 dB.
constexpr double kJpegVsFfmpegDefaultDb = 27.0;
constexpr double kJpegVsFfmpegAccurateDb = 37.0;
// DCT-scaled (3/8) decode + resize against full decode + resize of the same crop: 33.9 dB.
constexpr double kDctScaledDb = 30.0;
// PNG and H.264 frames: bit-identical (inf).
constexpr double kLosslessDb = 60.0;

class Fixtures {
 public:
  static const Fixtures& get() {
    static const Fixtures f;
    return f;
  }
  fs::path file(const char* name) const { return dir_.path() / name; }

 private:
  Fixtures() {
    make("-f lavfi -i testsrc2=size=640x480 -frames:v 1 -q:v 2", "img.jpg");
    make("-f lavfi -i testsrc2=size=1280x800 -frames:v 1 -q:v 3", "big.jpg");
    // Chroma subsampled both ways, in one direction only, and not at all; sizes that are not a
    // whole number of blocks.
    make("-f lavfi -i testsrc2=size=1283x797 -frames:v 1 -q:v 3 -pix_fmt yuvj420p", "odd420.jpg");
    make("-f lavfi -i testsrc2=size=1001x651 -frames:v 1 -q:v 3 -pix_fmt yuvj422p", "odd422.jpg");
    make("-f lavfi -i testsrc2=size=777x555 -frames:v 1 -q:v 3 -pix_fmt yuvj444p", "odd444.jpg");
    make("-f lavfi -i testsrc2=size=320x240 -frames:v 1", "img.png");
    make("-f lavfi -i testsrc2=size=640x360:rate=24:duration=3 -c:v libx264 -pix_fmt yuv420p -g 48",
         "clip.mp4");
    // Other pictures and length, the same encoder settings: the same decoder setup as clip.mp4.
    make("-f lavfi -i testsrc=size=640x360:rate=24:duration=2 -c:v libx264 -pix_fmt yuv420p -g 48",
         "clip2.mp4");
    make(
        "-f lavfi -i testsrc2=size=320x240:rate=24:duration=10 -c:v libx264 -pix_fmt yuv420p "
        "-g 48 -keyint_min 48 -sc_threshold 0",
        "long.mp4");
    make(
        "-f lavfi -i testsrc2=size=320x240:rate=24:duration=3 -c:v libx264 -pix_fmt yuv420p "
        "-movflags +faststart",
        "faststart.mp4");
    // The other codecs `mmprof gen --video-codec` writes: VP9 with alt-ref frames, MPEG-4 Part 2
    // with B-frames (its non-reference frames).
    make(
        "-f lavfi -i testsrc2=size=320x240:rate=24:duration=3 -c:v libvpx-vp9 -pix_fmt yuv420p "
        "-g 48 -deadline good -cpu-used 8 -crf 40 -b:v 0 -threads 1",
        "vp9.mp4");
    make(
        "-f lavfi -i testsrc2=size=320x240:rate=24:duration=3 -c:v mpeg4 -pix_fmt yuv420p "
        "-g 48 -bf 2 -q:v 4",
        "mpeg4.mp4");
  }
  void make(const std::string& input, const char* name) const {
    const auto r = test::run_command("ffmpeg -v error -nostdin -y " + input + " '" +
                                     file(name).string() + "'");
    if (r.exit_code != 0) throw std::runtime_error("ffmpeg failed: " + r.output);
  }
  test::TempDir dir_;
};

std::vector<uint8_t> prefix(const std::vector<uint8_t>& v, double fraction) {
  return {v.begin(), v.begin() + static_cast<ptrdiff_t>(static_cast<double>(v.size()) * fraction)};
}

double image_psnr(const RgbImage& img, const std::vector<uint8_t>& expected) {
  const size_t n = static_cast<size_t>(img.width) * img.height * 3;
  EXPECT_EQ(expected.size(), n);
  return expected.size() == n ? psnr(img.pixels.data(), expected.data(), n) : 0.0;
}

TEST(DecodeImageTest, JpegMatchesFfmpeg) {
  const auto path = Fixtures::get().file("img.jpg");
  const auto bytes = read_bytes(path);
  ImageDecoder dec;
  const ImageInfo info = dec.probe(bytes);
  EXPECT_EQ(info.width, 640);
  EXPECT_EQ(info.height, 480);
  EXPECT_EQ(info.format, "jpeg");
  RgbImage img;
  dec.decode(bytes, {}, 224, DctScaling::off, img);
  ASSERT_EQ(img.width, 640);
  ASSERT_EQ(img.height, 480);
  EXPECT_EQ(img.scale_num, 1);
  EXPECT_EQ(img.scale_den, 1);
  EXPECT_GT(image_psnr(img, ffmpeg_decode_rgb(path)), kJpegVsFfmpegDefaultDb);
  test::TempDir tmp;
  const auto raw = tmp.path() / "accurate.rgb";
  const auto r = test::run_command(
      "ffmpeg -v error -nostdin -y -i '" + path.string() +
      "' -sws_flags bicubic+accurate_rnd+full_chroma_int -f rawvideo -pix_fmt rgb24 '" +
      raw.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(image_psnr(img, read_bytes(raw)), kJpegVsFfmpegAccurateDb);
}

TEST(DecodeImageTest, PngMatchesFfmpegAndIgnoresTheExtension) {
  const auto png = Fixtures::get().file("img.png");
  const auto bytes = read_bytes(png);
  ImageDecoder dec;
  const ImageInfo info = dec.probe(bytes);
  EXPECT_EQ(info.width, 320);
  EXPECT_EQ(info.height, 240);
  EXPECT_EQ(info.format, "png");
  RgbImage img;
  dec.decode(bytes, {}, 0, DctScaling::eighths, img);
  EXPECT_GT(image_psnr(img, ffmpeg_decode_rgb(png)), kLosslessDb);
  // The same bytes under a .jpg name: the magic number decides, so it still decodes as PNG.
  test::TempDir tmp;
  test::write_bytes(tmp.path() / "really_png.jpg", bytes);
  RgbImage again;
  dec.decode(read_bytes(tmp.path() / "really_png.jpg"), {}, 0, DctScaling::eighths, again);
  EXPECT_EQ(again.width, 320);
  EXPECT_EQ(std::vector(again.pixels.begin(), again.pixels.begin() + 320 * 240 * 3),
            std::vector(img.pixels.begin(), img.pixels.begin() + 320 * 240 * 3));
}

// PNGs of every kind of pixel (8- and 16-bit colour and grey, with alpha, a palette, 1-bit) of
// 1301x1700 (6.6 MB of RGB), which mmprof converts to RGB in strips of 4 MiB (1072 rows, then
// 628): the same bytes as the ffmpeg CLI's conversion of the whole image with the same swscale
// flags (bilinear), so the strips are exact (16-bit to 8 included, whose ordered dither depends
// on the row).
TEST(DecodeImageTest, PngOfEveryPixelFormatConvertsByStripsExactly) {
  test::TempDir tmp;
  ImageDecoder dec;
  for (const char* pix : {"rgb24", "rgba", "rgb48be", "rgba64be", "pal8", "gray", "gray16be", "ya8",
                          "ya16be", "monob"}) {
    const auto png = tmp.path() / (std::string(pix) + ".png");
    auto r = test::run_command(
        "ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=size=1280x720 -frames:v 1 "
        "-vf scale=1301:1700 -pix_fmt " +
        std::string(pix) + " '" + png.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << pix << ": " << r.output;
    const auto raw = tmp.path() / (std::string(pix) + ".rgb");
    r = test::run_command("ffmpeg -v error -nostdin -y -i '" + png.string() +
                          "' -sws_flags bilinear -f rawvideo -pix_fmt rgb24 '" + raw.string() +
                          "'");
    ASSERT_EQ(r.exit_code, 0) << pix << ": " << r.output;
    RgbImage img;
    dec.decode(read_bytes(png), {}, 0, DctScaling::off, img);
    ASSERT_EQ(img.width, 1301) << pix;
    ASSERT_EQ(img.height, 1700) << pix;
    const std::vector<uint8_t> expected = read_bytes(raw);
    ASSERT_EQ(expected.size(), 1301u * 1700 * 3) << pix;
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), img.pixels.begin())) << pix;
  }
}

// The DCT-scaled decode of a crop, resized to 224, against the full decode resized the same way.
TEST(DecodeImageTest, DctScaledDecodeIsCloseToFullDecodeAndResize) {
  const auto bytes = read_bytes(Fixtures::get().file("big.jpg"));
  const CropRect crop{100, 80, 900, 700};
  ImageDecoder dec;
  RgbImage full, scaled;
  dec.decode(bytes, crop, 224, DctScaling::off, full);
  dec.decode(bytes, crop, 224, DctScaling::eighths, scaled);
  // 700 * 3/8 = 262.5 >= 224 while 700 * 2/8 = 175 is not: libjpeg-turbo's 3/8 is the smallest.
  EXPECT_EQ(scaled.scale_num * 8, 3 * scaled.scale_den);
  EXPECT_EQ(scaled.width, 480);
  EXPECT_EQ(scaled.height, 300);
  const CropRect small =
      scale_crop(crop, scaled.scale_num, scaled.scale_den, scaled.width, scaled.height);
  EXPECT_GE(small.w, 224);
  EXPECT_GE(small.h, 224);
  Resizer resizer;
  std::vector<uint8_t> a(224 * 224 * 3), b(224 * 224 * 3);
  resizer.resize(full.pixels.data(), full.width * 3, crop, a.data(), 224, 224);
  resizer.resize(scaled.pixels.data(), scaled.width * 3, small, b.data(), 224, 224);
  EXPECT_GT(psnr(a.data(), b.data(), a.size()), kDctScaledDb);

  // Halves only (the default set): 3/8 is not one, 4/8 = 1/2 is the smallest that keeps 224.
  RgbImage halved;
  dec.decode(bytes, crop, 224, DctScaling::halves, halved);
  EXPECT_EQ(halved.scale_num, 1);
  EXPECT_EQ(halved.scale_den, 2);
  EXPECT_EQ(halved.width, 640);
  EXPECT_EQ(halved.height, 400);
  const CropRect half_crop =
      scale_crop(crop, halved.scale_num, halved.scale_den, halved.width, halved.height);
  resizer.resize(halved.pixels.data(), halved.width * 3, half_crop, b.data(), 224, 224);
  EXPECT_GT(psnr(a.data(), b.data(), a.size()), kDctScaledDb);
  // A crop too small to halve is decoded whole: halves never picks a factor above 1/2 but 1.
  dec.decode(bytes, {0, 0, 400, 400}, 224, DctScaling::halves, halved);
  EXPECT_EQ(halved.scale_num, halved.scale_den);
  dec.decode(bytes, {0, 0, 400, 400}, 224, DctScaling::eighths, scaled);
  EXPECT_EQ(scaled.scale_num * 8, 5 * scaled.scale_den);  // 400 * 5/8 = 250
}

// A crop-aware decode (only the rows and block columns around the crop) gives exactly the
// pixels of the whole decode inside the crop: 4:2:0, 4:2:2 and 4:4:4 chroma, progressive, CMYK,
// sizes that are not whole blocks, with and without DCT scaling, crops drawn as
// RandomResizedCrop draws them and crops at every edge.
TEST(DecodeImageTest, CropDecodeGivesTheWholeDecodesPixelsInsideTheCrop) {
  const uint8_t ink[4] = {30, 200, 90, 160};
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> images = {
      {"odd420", read_bytes(Fixtures::get().file("odd420.jpg"))},
      {"odd422", read_bytes(Fixtures::get().file("odd422.jpg"))},
      {"odd444", read_bytes(Fixtures::get().file("odd444.jpg"))},
      {"progressive", test::progressive_jpeg(913, 611, 0)},
      {"cmyk", test::cmyk_jpeg(403, 301, ink, false)},
  };
  ImageDecoder dec;
  RgbImage whole, part;
  Rng rng(11);
  size_t compared = 0, decoded_part = 0, decoded_whole = 0;
  for (const auto& [name, bytes] : images) {
    const ImageInfo info = dec.probe(bytes);
    std::vector<CropRect> crops = {{0, 0, info.width, info.height},
                                   {0, 0, 37, 41},
                                   {info.width - 53, info.height - 29, 53, 29},
                                   {info.width / 3, 0, info.width / 4, info.height},
                                   {0, info.height / 2, info.width, info.height / 5}};
    for (int i = 0; i < 12; ++i)
      crops.push_back(random_resized_crop(rng, info.width, info.height));
    for (const CropRect& crop : crops) {
      for (const auto& [min_side, dct] : {std::pair{224, DctScaling::eighths},
                                          {224, DctScaling::off},
                                          {16, DctScaling::eighths},
                                          {224, DctScaling::halves}}) {
        SCOPED_TRACE(fmt::format("{} crop {},{} {}x{} min_side {} dct {}", name, crop.x, crop.y,
                                 crop.w, crop.h, min_side, static_cast<int>(dct)));
        dec.decode(bytes, crop, min_side, dct, whole);
        dec.decode(bytes, crop, min_side, dct, part, DecodeRegion::crop);
        ASSERT_EQ(part.scale_num * whole.scale_den, whole.scale_num * part.scale_den);
        ASSERT_EQ(part.crop.w, whole.crop.w);
        ASSERT_EQ(part.crop.h, whole.crop.h);
        ASSERT_EQ(part.height, part.crop.h);  // only the crop's rows
        ASSERT_LE(part.width, whole.width);
        for (int y = 0; y < whole.crop.h; ++y) {
          const auto row = [](const RgbImage& img, int r) {
            return img.pixels.data() +
                   (static_cast<size_t>(img.crop.y + r) * img.width + img.crop.x) * 3;
          };
          ASSERT_EQ(std::memcmp(row(part, y), row(whole, y), static_cast<size_t>(whole.crop.w) * 3),
                    0)
              << "row " << y;
        }
        ++compared;
        decoded_part += static_cast<size_t>(part.width) * part.height;
        decoded_whole += static_cast<size_t>(whole.width) * whole.height;
      }
    }
  }
  EXPECT_EQ(compared, 5u * 17 * 4);
  EXPECT_LT(decoded_part, decoded_whole * 3 / 4);  // the point of it: far fewer pixels decoded
}

// The rows below the crop are still entropy-decoded: damage there fails a crop decode as it
// fails a whole one.
TEST(DecodeImageTest, CropDecodeStillFailsOnDamageBelowTheCrop) {
  const auto jpeg = read_bytes(Fixtures::get().file("img.jpg"));
  auto damaged = jpeg;  // the last quarter of the entropy-coded data overwritten
  std::mt19937 gen(7);
  for (size_t i = damaged.size() * 3 / 4; i + 2 < damaged.size(); ++i)
    damaged[i] = static_cast<uint8_t>(gen() % 0xFF);  // no 0xFF: no marker is made
  ImageDecoder dec;
  RgbImage img;
  const CropRect top{10, 10, 200, 100};
  EXPECT_THROW(dec.decode(damaged, top, 224, DctScaling::off, img), DecodeError);
  EXPECT_THROW(dec.decode(damaged, top, 224, DctScaling::off, img, DecodeRegion::crop),
               DecodeError);
  dec.decode(jpeg, top, 224, DctScaling::off, img, DecodeRegion::crop);  // the intact file decodes
  EXPECT_EQ(img.height, 100);
}

TEST(DecodeImageTest, CorruptDataThrowsDecodeError) {
  const auto jpeg = read_bytes(Fixtures::get().file("img.jpg"));
  const auto png = read_bytes(Fixtures::get().file("img.png"));
  std::mt19937 gen(42);
  auto random_bytes = [&](size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v)
      b = static_cast<uint8_t>(gen());
    return v;
  };
  std::vector<uint8_t> soi_then_noise = random_bytes(20000);
  soi_then_noise[0] = 0xFF;
  soi_then_noise[1] = 0xD8;
  soi_then_noise[2] = 0xFF;
  soi_then_noise[3] = 0xE0;
  auto scrambled = jpeg;  // the middle third of the entropy-coded data overwritten
  for (size_t i = jpeg.size() / 3; i < 2 * jpeg.size() / 3; ++i) {
    scrambled[i] = static_cast<uint8_t>(gen());
  }
  const std::vector<std::vector<uint8_t>> bad = {{},        random_bytes(5000), soi_then_noise,
                                                 scrambled, prefix(jpeg, 0.6),  prefix(png, 0.6)};
  ImageDecoder dec;
  RgbImage img;
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_THROW(dec.decode(bad[i], {}, 224, DctScaling::eighths, img), DecodeError)
        << "case " << i;
  }
  EXPECT_THROW(dec.probe(random_bytes(64)), DecodeError);
  try {
    dec.decode({}, {}, 0, DctScaling::off, img);
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(), "empty image data (0 bytes)");
  }
  // The decoder stays usable after errors.
  dec.decode(jpeg, {}, 0, DctScaling::off, img);
  EXPECT_EQ(img.width, 640);
}

// Decodes the frames at `times` (full frame, native size) with a decoder of `threads` threads.
std::vector<uint8_t> decode_times(const std::vector<uint8_t>& bytes,
                                  const std::vector<double>& times,
                                  VideoDecodeStats* stats = nullptr, int threads = 1) {
  VideoDecoder dec(threads);
  const VideoInfo info = dec.open(bytes);
  std::vector<uint8_t> out(times.size() * info.width * info.height * 3);
  dec.decode_frames(times, {0, 0, info.width, info.height}, info.width, info.height, out.data());
  if (stats != nullptr) *stats = dec.stats();
  return out;
}

TEST(VideoDecodeTest, OpenReportsTheStream) {
  VideoDecoder dec;
  const VideoInfo info = dec.open(read_bytes(Fixtures::get().file("clip.mp4")));
  EXPECT_EQ(info.width, 640);
  EXPECT_EQ(info.height, 360);
  EXPECT_NEAR(info.fps, 24.0, 1e-9);
  EXPECT_NEAR(info.duration_s, 3.0, 0.05);
  EXPECT_EQ(info.frames, 72);
  EXPECT_EQ(info.codec, "h264");
  EXPECT_EQ(info.pix_fmt, "yuv420p");
}

// Frame k is asked for at k / fps (+ epsilon) and compared with ffmpeg's select of frame k; the
// last request lies past the end of the clip and must give the last frame.
TEST(VideoDecodeTest, FramesMatchFfmpeg) {
  const auto path = Fixtures::get().file("clip.mp4");
  const std::vector<int> frames = {0, 17, 50, 71};
  std::vector<double> times;
  for (int k : frames)
    times.push_back(k / 24.0 + 1e-6);
  times.push_back(10.0);
  const size_t frame_bytes = 640 * 360 * 3;
  const auto out = decode_times(read_bytes(path), times);
  for (size_t i = 0; i < times.size(); ++i) {
    const int k = i < frames.size() ? frames[i] : 71;
    const auto expected = ffmpeg_decode_rgb(path, k);
    ASSERT_EQ(expected.size(), frame_bytes);
    EXPECT_GT(psnr(out.data() + i * frame_bytes, expected.data(), frame_bytes), kLosslessDb)
        << "frame " << k;
  }
}

TEST(VideoDecodeTest, CropAndScaleUseTheRequestedRectangle) {
  const auto bytes = read_bytes(Fixtures::get().file("clip.mp4"));
  const std::vector<double> t = {1.0};
  VideoDecoder dec;
  dec.open(bytes);
  std::vector<uint8_t> full(640 * 360 * 3), crop(100 * 60 * 3), small(224 * 224 * 3);
  dec.decode_frames(t, {0, 0, 640, 360}, 640, 360, full.data());
  dec.decode_frames(t, {200, 100, 100, 60}, 100, 60, crop.data());  // even origin, native size
  for (int y = 0; y < 60; ++y) {
    ASSERT_EQ(0, std::memcmp(crop.data() + y * 300, full.data() + ((100 + y) * 640 + 200) * 3, 300))
        << "row " << y;
  }
  dec.decode_frames(t, {100, 50, 300, 300}, 224, 224, small.data());
  Resizer resizer;  // swscale's bilinear vs our antialiased resize of the same crop
  std::vector<uint8_t> reference(224 * 224 * 3);
  resizer.resize(full.data(), 640 * 3, {100, 50, 300, 300}, reference.data(), 224, 224);
  EXPECT_GT(psnr(small.data(), reference.data(), small.size()), 25.0);
}

// 10 s at 24 fps with a keyframe every 2 s: eight uniform times need only part of the file, and
// the seeking decoder gives exactly the frames ffmpeg decodes forward from the start.
TEST(VideoSeekTest, SeeksSkipWorkAndKeepPixels) {
  const auto path = Fixtures::get().file("long.mp4");
  const auto bytes = read_bytes(path);
  VideoDecoder probe;
  const VideoInfo info = probe.open(bytes);
  ASSERT_EQ(info.frames, 240);
  std::vector<double> times;
  Rng rng(0);
  sample_frame_times(info, 8, FrameSampling::uniform, rng, times);
  times.push_back(95 / 24.0);  // the frame just before the keyframe at 4 s
  std::sort(times.begin(), times.end());
  VideoDecodeStats stats;
  const auto out = decode_times(bytes, times, &stats);
  EXPECT_LT(stats.frames_decoded, 240);
  EXPECT_GT(stats.seeks, 0);
  const size_t frame_bytes = 320 * 240 * 3;
  for (size_t i = 0; i < times.size(); ++i) {
    const int k = static_cast<int>(std::ceil(times[i] * 24 - 1e-6));
    const auto expected = ffmpeg_decode_rgb(path, k);
    EXPECT_GT(psnr(out.data() + i * frame_bytes, expected.data(), frame_bytes), kLosslessDb)
        << "t=" << times[i] << " frame " << k;
  }
}

// VP9 and MPEG-4 Part 2 clips (reordered B-frames, VP9's hidden alt-ref frames): the frames at
// uniform times, non-reference skipping on, are those ffmpeg decodes forward from the start.
TEST(VideoDecodeTest, Vp9AndMpeg4FramesMatchFfmpeg) {
  for (const char* name : {"vp9.mp4", "mpeg4.mp4"}) {
    const auto path = Fixtures::get().file(name);
    const auto bytes = read_bytes(path);
    VideoDecoder probe;
    const VideoInfo info = probe.open(bytes);
    ASSERT_EQ(info.frames, 72) << name;
    std::vector<double> times;
    Rng rng(0);
    sample_frame_times(info, 8, FrameSampling::uniform, rng, times);
    const auto out = decode_times(bytes, times);
    const size_t frame_bytes = 320 * 240 * 3;
    for (size_t i = 0; i < times.size(); ++i) {
      const int k = static_cast<int>(std::ceil(times[i] * 24 - 1e-6));
      const auto expected = ffmpeg_decode_rgb(path, k);
      EXPECT_GT(psnr(out.data() + i * frame_bytes, expected.data(), frame_bytes), kLosslessDb)
          << name << " t=" << times[i] << " frame " << k;
    }
  }
}

// Times that go backwards, and every frame around a keyframe, against single-time decoders.
TEST(VideoSeekTest, BackwardAndBoundaryTimesMatchFreshDecoders) {
  const auto bytes = read_bytes(Fixtures::get().file("long.mp4"));
  std::vector<double> times = {7.0, 2.5};
  for (int k = 94; k <= 98; ++k)
    times.push_back(k / 24.0);
  times.push_back(0.0);
  const size_t frame_bytes = 320 * 240 * 3;
  const auto out = decode_times(bytes, times, nullptr, /*threads=*/2);
  for (size_t i = 0; i < times.size(); ++i) {
    const auto single = decode_times(bytes, {times[i]});
    EXPECT_EQ(0, std::memcmp(out.data() + i * frame_bytes, single.data(), frame_bytes))
        << "t=" << times[i];
  }
}

// Targets inside the current GOP are decoded forward. Frame 47 is the last before the keyframe at
// 48 (2 s), whose decode timestamp (MP4's index timeline) is already <= 47's presentation time: a
// seek there would land on frame 0 again. Frame 150 lies beyond the keyframe at 144 and seeks.
// Non-reference skipping is off so that every frame up to a target comes out and is counted.
TEST(VideoSeekTest, ForwardTargetInsideTheGopDoesNotSeek) {
  const auto bytes = read_bytes(Fixtures::get().file("long.mp4"));
  VideoDecoder dec(1, kDefaultMaxPixels, {.skip_nonref = false});
  const VideoInfo info = dec.open(bytes);
  const size_t frame_bytes = static_cast<size_t>(info.width) * info.height * 3;
  std::vector<uint8_t> out(frame_bytes);
  const auto decode = [&](int k) {
    const std::vector<double> t = {k / 24.0};
    dec.decode_frames(t, {0, 0, info.width, info.height}, info.width, info.height, out.data());
    EXPECT_EQ(out, decode_times(bytes, t)) << "frame " << k;
  };
  decode(10);
  decode(47);
  EXPECT_EQ(dec.stats().seeks, 0);
  EXPECT_EQ(dec.stats().frames_decoded, 48);  // frames 0..47, each once
  decode(150);
  EXPECT_EQ(dec.stats().seeks, 1);
  EXPECT_EQ(dec.stats().frames_decoded, 48 + 7);  // then 144..150
}

// One decoder over several clips, with and without context reuse: the same bytes out, a context
// opened only when the setup changes or after an error.
TEST(VideoReuseTest, ReusedContextGivesIdenticalFrames) {
  const auto& fx = Fixtures::get();
  const auto clip = read_bytes(fx.file("clip.mp4"));
  const auto clip2 = read_bytes(fx.file("clip2.mp4"));
  const auto long_clip = read_bytes(fx.file("long.mp4"));
  const auto broken = prefix(clip, 0.4);
  const std::vector<const std::vector<uint8_t>*> sequence = {&clip,  &clip2,  &clip, &long_clip,
                                                             &clip2, &broken, &clip2};
  const auto run = [&](bool reuse, std::vector<int64_t>& opens) {
    VideoDecoder dec(1, kDefaultMaxPixels, {.reuse_decoder = reuse});
    std::vector<uint8_t> all, out(8 * 96 * 96 * 3);
    std::vector<double> times;
    Rng rng(0);
    for (const auto* bytes : sequence) {
      try {
        const VideoInfo info = dec.open(*bytes);
        sample_frame_times(info, 8, FrameSampling::uniform, rng, times);
        dec.decode_frames(times, {0, 0, info.width, info.height}, 96, 96, out.data());
        all.insert(all.end(), out.begin(), out.end());
        opens.push_back(dec.stats().decoder_opens);
      } catch (const DecodeError&) {
        opens.push_back(-1);
      }
      dec.close();
    }
    return all;
  };
  std::vector<int64_t> opens_reuse, opens_fresh;
  const auto reused = run(true, opens_reuse);
  const auto fresh = run(false, opens_fresh);
  EXPECT_EQ(opens_fresh, (std::vector<int64_t>{1, 1, 1, 1, 1, -1, 1}));
  EXPECT_EQ(opens_reuse, (std::vector<int64_t>{1, 0, 0, 1, 1, -1, 1}));
  ASSERT_EQ(reused.size(), 6 * 8 * 96 * 96 * 3u);
  EXPECT_TRUE(reused == fresh);  // not EXPECT_EQ: a mismatch would print 1.3 MB
}

// Skipping the non-reference frames before each target gives the same frames, with fewer frames
// decoded: ascending, descending, every frame around a keyframe, and a time past the end (the last
// frame, which the skipping path decodes again without skipping). H.264 and MPEG-4 Part 2 have
// non-reference frames (x264's and B-frames); libvpx's VP9 refreshes a reference with every
// shown frame, so there skipping finds nothing to drop, and costs nothing: the time past the end
// is not decoded twice when its last frame was not dropped.
TEST(VideoSkipTest, SkippingNonReferenceFramesKeepsPixels) {
  std::vector<double> times = {0.3, 1.0, 1.5, 1.9, 2.5, 2.6, 1.2};
  for (int k = 44; k <= 50; ++k)
    times.push_back(k / 24.0);
  times.push_back(100.0);
  for (const char* name : {"clip.mp4", "long.mp4", "mpeg4.mp4", "vp9.mp4"}) {
    const auto bytes = read_bytes(Fixtures::get().file(name));
    const auto run = [&](bool skip, VideoDecodeStats& stats) {
      VideoDecoder dec(1, kDefaultMaxPixels, {.skip_nonref = skip});
      const VideoInfo info = dec.open(bytes);
      std::vector<uint8_t> out(times.size() * 128 * 96 * 3);
      dec.decode_frames(times, {0, 0, info.width, info.height}, 128, 96, out.data());
      stats = dec.stats();
      return out;
    };
    VideoDecodeStats skipping, every;
    EXPECT_TRUE(run(true, skipping) == run(false, every)) << name;
    if (std::string(name) == "vp9.mp4") {
      EXPECT_EQ(skipping.frames_decoded, every.frames_decoded) << name;  // no redo either
    } else {
      EXPECT_LT(skipping.frames_decoded, every.frames_decoded) << name;
    }
  }
}

TEST(VideoDecodeTest, SampleFrameTimes) {
  VideoInfo info;
  info.duration_s = 10.0;
  info.fps = 24.0;
  info.frames = 240;
  Rng rng(1);
  std::vector<double> t;
  sample_frame_times(info, 4, FrameSampling::uniform, rng, t);
  EXPECT_EQ(t, (std::vector<double>{1.25, 3.75, 6.25, 8.75}));
  Rng a(5), b(5);
  std::vector<double> ta, tb;
  sample_frame_times(info, 8, FrameSampling::random_window, a, ta);
  sample_frame_times(info, 8, FrameSampling::random_window, b, tb);
  EXPECT_EQ(ta, tb);
  ASSERT_EQ(ta.size(), 8u);
  for (size_t i = 1; i < ta.size(); ++i)
    EXPECT_NEAR(ta[i] - ta[i - 1], 1 / 24.0, 1e-9);
  EXPECT_LE(ta.back(), 239 / 24.0 + 1e-9);
  info.frames = 5;  // shorter than the window: clamped to the last frame
  info.duration_s = 5 / 24.0;
  sample_frame_times(info, 8, FrameSampling::random_window, a, ta);
  EXPECT_DOUBLE_EQ(ta.front(), 0.0);
  EXPECT_DOUBLE_EQ(ta.back(), 4 / 24.0);
}

TEST(VideoDecodeTest, TruncatedOrBogusVideoThrowsDecodeError) {
  const auto mp4 = read_bytes(Fixtures::get().file("clip.mp4"));
  const auto faststart = read_bytes(Fixtures::get().file("faststart.mp4"));
  std::mt19937 gen(3);
  std::vector<uint8_t> noise(50000);
  for (auto& b : noise)
    b = static_cast<uint8_t>(gen());
  const std::vector<std::vector<uint8_t>> bad = {
      {}, prefix(mp4, 0.4), prefix(faststart, 0.4), noise};
  const std::vector<double> t = {0.5, 2.5};
  std::vector<uint8_t> out(2 * 64 * 64 * 3);
  for (size_t i = 0; i < bad.size(); ++i) {
    VideoDecoder dec;
    EXPECT_THROW(
        {
          const VideoInfo info = dec.open(bad[i]);
          dec.decode_frames(t, {0, 0, info.width, info.height}, 64, 64, out.data());
        },
        DecodeError)
        << "case " << i;
  }
}

// Only the table's containers are opened: an MPEG-TS clip (whatever its name) and an HLS
// playlist naming a local file are refused (before: the MPEG-TS clip decoded, and the playlist
// reached FFmpeg's HLS demuxer, whose job is to open what a playlist names).
TEST(VideoDecodeTest, ContainersOutsideTheTableAreRefusedNeverOpened) {
  test::TempDir dir;
  const fs::path ts = dir.path() / "clip.ts";
  const auto r = test::run_command(
      "ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=size=64x48:rate=10:duration=1 -c:v "
      "libx264 -f mpegts '" +
      ts.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string playlist =
      "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n" + ts.string() + "\n#EXT-X-ENDLIST\n";
  for (const auto& bytes :
       {read_bytes(ts), std::vector<uint8_t>(playlist.begin(), playlist.end())}) {
    VideoDecoder dec;
    try {
      dec.open(bytes);
      FAIL() << "opened";
    } catch (const DecodeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(
                    "not a video mmprof reads (MP4/Matroska/WebM/QuickTime/AVI)", 0),
                0u)
          << e.what();
    }
  }
}

using test::fake_clock;

// A clip's decode past video.max_decode_ms fails with the key named (checked at every packet);
// the same decoder then opens and decodes the next clip within its budget.
TEST(VideoDecodeTest, ADecodePastItsBudgetFailsWithTheKeyNamed) {
  const auto mp4 = read_bytes(Fixtures::get().file("clip.mp4"));
  const std::vector<double> t = {0.5, 2.5};
  std::vector<uint8_t> out(2 * 64 * 64 * 3);
  VideoDecoder slow(1, kDefaultMaxPixels, {},
                    DecodeBudget(2500, "video.max_decode_ms", fake_clock));
  const VideoInfo info = slow.open(mp4);
  try {
    slow.decode_frames(t, {0, 0, info.width, info.height}, 64, 64, out.data());
    FAIL() << "no budget error";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(), "decode stopped after 3000 ms, past video.max_decode_ms=2500");
  }
  VideoDecoder fine(1, kDefaultMaxPixels, {}, DecodeBudget(60'000, "video.max_decode_ms"));
  fine.open(mp4);
  EXPECT_NO_THROW(fine.decode_frames(t, {0, 0, info.width, info.height}, 64, 64, out.data()));
}

}  // namespace
}  // namespace mmprof
