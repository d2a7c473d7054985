// Decoding what `mmprof gen` writes, cross-checked against an independent decoder (the ffmpeg
// CLI): a generated JPEG, PNG and video frame must match it within stated PSNR bounds.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "decode/image_decoder.hpp"
#include "decode/video_decoder.hpp"
#include "integration/loader_fixture.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace {

namespace fs = std::filesystem;

fs::path first_with_extension(const std::string& ext) {
  for (const auto& e : fs::directory_iterator(loader_fixture().root / "files")) {
    if (e.path().extension() == ext) return e.path();
  }
  throw std::runtime_error("the generated fixture has no " + ext + " file");
}

// ffmpeg with interpolated chroma (as libjpeg-turbo's fancy upsampling); its default rgb24 path
// replicates chroma samples instead. Measured on the fixture's first generated JPEG: 50.2 dB.
std::vector<uint8_t> ffmpeg_accurate_rgb(const fs::path& file) {
  TempDir tmp;
  const auto raw = tmp.path() / "out.rgb";
  const auto r = run_command("ffmpeg -v error -nostdin -y -i '" + file.string() +
                             "' -sws_flags bicubic+accurate_rnd+full_chroma_int -frames:v 1 "
                             "-f rawvideo -pix_fmt rgb24 '" +
                             raw.string() + "'");
  if (r.exit_code != 0) throw std::runtime_error("ffmpeg failed: " + r.output);
  return read_bytes(raw);
}

double decoded_psnr(const fs::path& file, const std::vector<uint8_t>& reference) {
  ImageDecoder decoder;
  RgbImage image;
  decoder.decode(read_bytes(file), {}, 0, DctScaling::off, image);
  const size_t n = static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * 3;
  if (reference.size() != n) return -1;
  return psnr(image.pixels.data(), reference.data(), n);
}

TEST(GeneratedDecode, JpegMatchesFfmpeg) {
  const auto jpg = first_with_extension(".jpg");
  const double db = decoded_psnr(jpg, ffmpeg_accurate_rgb(jpg));
  RecordProperty("psnr_db", std::to_string(db));
  EXPECT_GT(db, 40.0) << jpg;
}

TEST(GeneratedDecode, PngIsBitExact) {
  const auto png = first_with_extension(".png");
  EXPECT_GT(decoded_psnr(png, ffmpeg_decode_rgb(png)), 99.0) << png;  // inf when identical
}

// Issue 34, item 1: a PNG carrying a zTXt chunk that inflates to 256 MiB and an iCCP chunk (each a
// valid zlib stream, CRCs right; written by Python's zlib, not by mmprof) decodes to the same
// pixels as the PNG without them, and the bytes FFmpeg is given hold neither chunk: it never
// inflates them (before: 2 GiB and 15 s a decode for a 1 GiB zTXt).
TEST(GeneratedDecode, CompressedPngMetadataIsNeverInflated) {
  const auto png = first_with_extension(".png");
  TempDir tmp;
  const auto bomb = tmp.path() / "bomb.png";
  const auto r = run_command(
      "python3 -c 'import sys, zlib, struct\n"
      "src, dst = sys.argv[1], sys.argv[2]\n"
      "b = open(src, \"rb\").read()\n"
      "def chunk(t, d): return struct.pack(\">I\", len(d)) + t + d + struct.pack(\">I\", "
      "zlib.crc32(t + d))\n"
      "z = chunk(b\"zTXt\", b\"Comment\\0\\0\" + zlib.compress(bytes(256 << 20), 9))\n"
      "i = chunk(b\"iCCP\", b\"icc\\0\\0\" + zlib.compress(bytes(1 << 20), 9))\n"
      "open(dst, \"wb\").write(b[:33] + z + i + b[33:])' '" +
      png.string() + "' '" + bomb.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<uint8_t> bytes = read_bytes(bomb);
  ASSERT_GT(bytes.size(), read_bytes(png).size() + 100'000);  // ~260 kB of zlib streams added
  std::vector<uint8_t> scratch;
  const auto stripped = png_without_compressed_metadata(bytes, scratch);
  EXPECT_EQ(std::vector<uint8_t>(stripped.begin(), stripped.end()), read_bytes(png));
  ImageDecoder decoder;
  RgbImage with, without;
  decoder.decode(bytes, {}, 0, DctScaling::off, with);
  decoder.decode(read_bytes(png), {}, 0, DctScaling::off, without);
  EXPECT_EQ(with.width, without.width);
  EXPECT_EQ(with.pixels, without.pixels);
  // No chunk to drop: the bytes themselves, no copy.
  const std::vector<uint8_t> plain = read_bytes(png);
  EXPECT_EQ(png_without_compressed_metadata(plain, scratch).data(), plain.data());
  // A chunk that runs past the end stops the walk: the rest is kept for the decoder to judge.
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 60);
  EXPECT_EQ(png_without_compressed_metadata(cut, scratch).size(), 60u);
}

TEST(GeneratedDecode, VideoFramesMatchFfmpeg) {
  const auto mp4 = first_with_extension(".mp4");
  const auto bytes = read_bytes(mp4);
  VideoDecoder decoder;
  const VideoInfo info = decoder.open(bytes);
  ASSERT_EQ(info.codec, "h264");
  ASSERT_EQ(info.pix_fmt, "yuv420p");
  const size_t frame = static_cast<size_t>(info.width) * static_cast<size_t>(info.height) * 3;
  for (int k : {0, 5, static_cast<int>(info.frames) - 1}) {
    const std::vector<double> t = {k / info.fps + 1e-6};
    std::vector<uint8_t> out(frame);
    decoder.decode_frames(t, CropRect{0, 0, info.width, info.height}, info.width, info.height,
                          out.data());
    const auto expected = ffmpeg_decode_rgb(mp4, k);
    ASSERT_EQ(expected.size(), frame);
    EXPECT_GT(psnr(out.data(), expected.data(), frame), 60.0) << mp4 << " frame " << k;
  }
}

}  // namespace
}  // namespace mmprof::test
