// Animated images give their first frame, as PIL does: GIF and APNG through FFmpeg's decoders,
// animated WebP (which FFmpeg 5.1 refuses) through decode/webp_frame.hpp, drawn at its offset on
// a black canvas. Fixtures are made with the ffmpeg CLI: two frames, red then blue.
#include "decode/webp_frame.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> ffmpeg_file(const test::TempDir& dir, const std::string& input,
                                 const std::string& output_options, const std::string& name) {
  const fs::path path = dir.path() / name;
  const auto r = test::run_command("ffmpeg -v error -nostdin -y -f lavfi -i '" + input + "' " +
                                   output_options + " '" + path.string() + "'");
  if (r.exit_code != 0) throw std::runtime_error("ffmpeg failed: " + r.output);
  return test::read_bytes(path);
}

constexpr const char* kRedThenBlue =
    "color=c=red:s=32x24:r=1:d=1[a];color=c=blue:s=32x24:r=1:d=1[b];[a][b]concat[out0]";

// Every pixel red (the first frame), none blue (the second).
void expect_first_frame(const RgbImage& img, int width, int height) {
  ASSERT_EQ(img.width, width);
  ASSERT_EQ(img.height, height);
  for (size_t p = 0; p < static_cast<size_t>(width) * height; ++p) {
    ASSERT_GT(img.pixels[p * 3], 200) << "pixel " << p;
    ASSERT_LT(img.pixels[p * 3 + 2], 50) << "pixel " << p;
  }
}

// Before: the animated WebP was "corrupt webp data: the decoder gave no image".
TEST(AnimatedImageTest, GifApngAndWebpGiveTheirFirstFrame) {
  test::TempDir dir;
  const std::pair<const char*, const char*> files[] = {
      {"anim.webp", "-c:v libwebp_anim -lossless 1 -loop 0"},
      {"anim.gif", "-loop 0"},
      {"anim.apng", "-plays 0 -f apng"}};
  ImageDecoder dec;
  for (const auto& [name, options] : files) {
    SCOPED_TRACE(name);
    const auto bytes = ffmpeg_file(dir, kRedThenBlue, options, name);
    RgbImage img;
    dec.decode(bytes, {}, 0, DctScaling::off, img);
    expect_first_frame(img, 32, 24);
    const ImageInfo info = dec.probe(bytes);
    EXPECT_EQ(info.width, 32);
    EXPECT_EQ(info.height, 24);
  }
}

uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void append(std::vector<uint8_t>& out, std::initializer_list<int> bytes) {
  for (const int b : bytes)
    out.push_back(static_cast<uint8_t>(b));
}

// An animated WebP written by hand around a still lossless frame: 16x12 canvas, the 8x6 frame
// at (2, 4). The canvas outside the frame is black, as PIL's is after its RGB conversion.
TEST(AnimatedImageTest, AWebpFrameSmallerThanItsCanvasIsDrawnAtItsOffset) {
  test::TempDir dir;
  const auto still = ffmpeg_file(dir, "color=c=red:s=8x6:d=1",
                                 "-frames:v 1 -c:v libwebp -lossless 1", "still.webp");
  ASSERT_EQ(std::memcmp(still.data() + 12, "VP8L", 4), 0);
  const std::vector<uint8_t> vp8l(still.begin() + 12, still.end());  // the bitstream chunk
  std::vector<uint8_t> anim = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'};
  append(anim, {'V', 'P', '8', 'X', 10, 0, 0, 0, 0x02, 0, 0, 0, 15, 0, 0, 11, 0, 0});
  append(anim, {'A', 'N', 'I', 'M', 6, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto anmf_size = static_cast<uint32_t>(16 + vp8l.size());
  append(anim, {'A', 'N', 'M', 'F', static_cast<int>(anmf_size & 0xFF),
                static_cast<int>(anmf_size >> 8 & 0xFF), 0, 0});
  append(anim,
         {1, 0, 0, 2, 0, 0, 7, 0, 0, 5, 0, 0, 100, 0, 0, 0});  // x/2, y/2, w-1, h-1, ms, flags
  anim.insert(anim.end(), vp8l.begin(), vp8l.end());
  if (anim.size() % 2 != 0) anim.push_back(0);
  const auto riff = static_cast<uint32_t>(anim.size() - 8);
  std::memcpy(anim.data() + 4, &riff, 4);  // little-endian host, as the test machines are
  ASSERT_EQ(le32(anim.data() + 4), riff);

  std::vector<uint8_t> rewrapped;
  const auto frame = detail::first_webp_frame(anim, rewrapped);
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->canvas_width, 16);
  EXPECT_EQ(frame->canvas_height, 12);
  EXPECT_EQ(frame->x, 2);
  EXPECT_EQ(frame->y, 4);
  EXPECT_EQ(frame->width, 8);
  EXPECT_EQ(frame->height, 6);
  EXPECT_EQ(detail::first_webp_frame(still, rewrapped), std::nullopt);  // a still: as it is

  ImageDecoder dec;
  RgbImage img;
  dec.decode(anim, {}, 0, DctScaling::off, img);
  ASSERT_EQ(img.width, 16);
  ASSERT_EQ(img.height, 12);
  for (int y = 0; y < 12; ++y) {
    for (int x = 0; x < 16; ++x) {
      const bool inside = x >= 2 && x < 10 && y >= 4 && y < 10;
      const uint8_t* p = img.pixels.data() + (static_cast<size_t>(y) * 16 + x) * 3;
      EXPECT_EQ(p[0] > 200, inside) << x << "," << y;
      EXPECT_EQ(p[1], 0) << x << "," << y;
    }
  }
  // Cut inside the frame's chunk: damage, said as such.
  const std::vector<uint8_t> cut(anim.begin(), anim.begin() + 60);
  EXPECT_THROW(dec.decode(cut, {}, 0, DctScaling::off, img), DecodeError);
}

}  // namespace
}  // namespace mmprof
