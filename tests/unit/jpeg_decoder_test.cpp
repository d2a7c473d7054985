// The JPEG decoder's guards and colour spaces: the progressive scan limit, the decode time budget
// (on an injected clock), CMYK and YCCK JPEGs converted as PIL converts them. Files are written
// with libjpeg's API (tests/support/jpeg_writer.hpp).
#include "decode/jpeg_decoder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decode/decode_budget.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "support/jpeg_writer.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::decode_error;

// A progressive JPEG of 568 scans (the 31 s stall of issue 15 was one of thousands) is refused
// by the scan limit (before: decoded, however long it took); an encoder's 10-scan progressive
// JPEG decodes as the baseline of the same picture would.
TEST(JpegDecoderTest, AProgressiveJpegOfTooManyScansIsRefused) {
  ASSERT_GT(test::progressive_scans(2), detail::kMaxJpegScans);
  const auto many = test::progressive_jpeg(64, 48, 2);
  const auto usual = test::progressive_jpeg(64, 48, 0);
  ImageDecoder dec;
  RgbImage img;
  const std::string what = decode_error(dec, many, img);
  EXPECT_NE(what.find("progressive JPEG with more than 500 scans"), std::string::npos) << what;
  EXPECT_EQ(decode_error(dec, usual, img), "");  // the same decoder, usable after the refusal
  EXPECT_EQ(img.width, 64);
  EXPECT_EQ(img.height, 48);
  EXPECT_EQ(dec.probe(many).width, 64);  // the header alone is fine
}

using test::fake_clock;

// A decode past image.max_decode_ms fails its sample with the budget named; with no budget (0) or
// a real clock and a generous budget, the same file decodes.
TEST(JpegDecoderTest, ADecodePastItsBudgetFailsWithTheKeyNamed) {
  const auto jpeg = test::progressive_jpeg(64, 48, 0);
  ImageDecoder slow(kDefaultMaxPixels, DecodeBudget(1500, "image.max_decode_ms", fake_clock));
  RgbImage img;
  const std::string what = decode_error(slow, jpeg, img);
  EXPECT_EQ(what.rfind("decode stopped after ", 0), 0u) << what;
  EXPECT_NE(what.find(" ms, past image.max_decode_ms=1500"), std::string::npos) << what;
  ImageDecoder unlimited(kDefaultMaxPixels, DecodeBudget(0, "image.max_decode_ms", fake_clock));
  EXPECT_EQ(decode_error(unlimited, jpeg, img), "");
  ImageDecoder real(kDefaultMaxPixels, DecodeBudget(60'000, "image.max_decode_ms"));
  EXPECT_EQ(decode_error(real, jpeg, img), "");
}

// A scan repeated a thousand times (each a walk of the whole image; the old decoder finished
// them all before refusing the file: 68 s for 3,000 repeats at 2000x1500) stops at the first
// repeat. The budget here (200 reads of a clock that moves a second per read) would end a decode
// that went on through the repeats, with another message.
TEST(JpegDecoderTest, ARepeatedScanStopsTheDecodeAtOnce) {
  const auto jpeg = test::with_last_scan_repeated(test::progressive_jpeg(64, 48, 0), 1000);
  ImageDecoder dec(kDefaultMaxPixels, DecodeBudget(200'000, "image.max_decode_ms", fake_clock));
  RgbImage img;
  const std::string what = decode_error(dec, jpeg, img);
  EXPECT_EQ(what,
            "corrupt JPEG data: Inconsistent progression sequence for component 0 "
            "coefficient 1")
      << what;
}

// PIL's numbers: Image.frombytes("CMYK", (1, 1), bytes([127, 0, 255, 55])).convert("RGB") is
// (100, 200, 0) with Pillow 9.4 (Debian 12); a JPEG stores that colour inverted (128, 255, 0, 200).
TEST(JpegDecoderTest, CmykConvertsAsPilDoes) {
  const uint8_t stored[][4] = {{128, 255, 0, 200}, {255, 255, 255, 255}, {0, 0, 0, 0}};
  const uint8_t expected[][3] = {{100, 200, 0}, {255, 255, 255}, {0, 0, 0}};
  for (size_t i = 0; i < 3; ++i) {
    uint8_t rgb[3];
    detail::cmyk_to_rgb(stored[i], rgb, 1);
    EXPECT_EQ(std::vector<uint8_t>(rgb, rgb + 3),
              std::vector<uint8_t>(expected[i], expected[i] + 3))
        << i;
  }
}

// CMYK and YCCK JPEGs (before: "Unsupported color conversion request") decode to PIL's RGB, give
// or take the JPEG's rounding.
TEST(JpegDecoderTest, CmykAndYcckJpegsDecodeToPilsRgb) {
  const uint8_t stored[4] = {128, 255, 0, 200};
  for (const bool ycck : {false, true}) {
    SCOPED_TRACE(ycck ? "YCCK" : "CMYK");
    ImageDecoder dec;
    RgbImage img;
    const auto jpeg = test::cmyk_jpeg(40, 24, stored, ycck);
    ASSERT_EQ(decode_error(dec, jpeg, img), "");
    ASSERT_EQ(img.width, 40);
    ASSERT_EQ(img.height, 24);
    const uint8_t pil[3] = {100, 200, 0};
    for (size_t p = 0; p < 40 * 24; ++p) {
      for (int c = 0; c < 3; ++c) {
        ASSERT_NEAR(img.pixels[p * 3 + c], pil[c], 2) << "pixel " << p << " channel " << c;
      }
    }
    // DCT scaling applies to CMYK too.
    dec.decode(jpeg, {}, 10, DctScaling::eighths, img);
    EXPECT_EQ(img.width, 20);
    EXPECT_EQ(img.scale_den, 2);
  }
}

}  // namespace
}  // namespace mmprof
