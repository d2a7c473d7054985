// Crop geometry, the antialiased resizer and the CHW/normalize step: exact values on small inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/test_support.hpp"
#include "transform/crop.hpp"
#include "transform/normalize.hpp"
#include "transform/resize.hpp"

namespace mmprof {
namespace {

std::vector<uint8_t> pattern_image(int w, int h) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < img.size(); ++i)
    img[i] = static_cast<uint8_t>((i * 37 + i / 7) & 0xFF);
  return img;
}

TEST(CropTest, RectanglesStayInBoundsWithAreaAndRatioInRange) {
  const int width = 640, height = 480;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Rng rng(seed);
    const CropRect r = random_resized_crop(rng, width, height);
    ASSERT_GE(r.x, 0);
    ASSERT_GE(r.y, 0);
    ASSERT_GT(r.w, 0);
    ASSERT_GT(r.h, 0);
    ASSERT_LE(r.x + r.w, width);
    ASSERT_LE(r.y + r.h, height);
    // w and h are rounded to integers, which moves area and ratio by up to ~1/w + 1/h.
    const double slack = 1.0 / r.w + 1.0 / r.h;
    const double area = static_cast<double>(r.w) * r.h / (width * height);
    EXPECT_GE(area, 0.08 * (1 - slack)) << seed;
    EXPECT_LE(area, 1.0) << seed;
    const double ratio = static_cast<double>(r.w) / r.h;
    EXPECT_GE(ratio, 0.75 * (1 - slack)) << seed;
    EXPECT_LE(ratio, 4.0 / 3.0 * (1 + slack)) << seed;
  }
}

TEST(CropTest, DeterministicPerSeed) {
  int differing = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng a(seed), b(seed), c(seed + 1000);
    const CropRect ra = random_resized_crop(a, 800, 600);
    const CropRect rb = random_resized_crop(b, 800, 600);
    const CropRect rc = random_resized_crop(c, 800, 600);
    EXPECT_EQ(ra.x, rb.x);
    EXPECT_EQ(ra.y, rb.y);
    EXPECT_EQ(ra.w, rb.w);
    EXPECT_EQ(ra.h, rb.h);
    differing += (ra.x != rc.x || ra.w != rc.w || ra.h != rc.h) ? 1 : 0;
  }
  EXPECT_GT(differing, 40);
}

// A 10x1000 image admits no crop of area >= 8% with ratio in [3/4, 4/3], so all ten attempts fail
// and get_params falls back to the centre crop narrowed to ratio 3/4: h = round(10 / 0.75) = 13.
TEST(CropTest, ExtremeAspectFallsBackToCentreCrop) {
  Rng rng(7);
  const CropRect tall = random_resized_crop(rng, 10, 1000);
  EXPECT_EQ(tall.x, 0);
  EXPECT_EQ(tall.y, (1000 - 13) / 2);
  EXPECT_EQ(tall.w, 10);
  EXPECT_EQ(tall.h, 13);
  const CropRect wide = random_resized_crop(rng, 1000, 10);
  EXPECT_EQ(wide.x, (1000 - 13) / 2);
  EXPECT_EQ(wide.y, 0);
  EXPECT_EQ(wide.w, 13);
  EXPECT_EQ(wide.h, 10);
}

TEST(CropTest, ScaleCropCoversTheSourceRectangle) {
  const CropRect a = scale_crop({10, 20, 100, 50}, 1, 2, 320, 240);
  EXPECT_EQ(a.x, 5);
  EXPECT_EQ(a.y, 10);
  EXPECT_EQ(a.w, 50);
  EXPECT_EQ(a.h, 25);
  const CropRect b = scale_crop({3, 3, 5, 5}, 1, 2, 100, 100);  // [3,8) -> [1.5,4) -> [1,4)
  EXPECT_EQ(b.x, 1);
  EXPECT_EQ(b.w, 3);
  const CropRect c = scale_crop({600, 400, 40, 80}, 3, 8, 240, 180);  // clamped at the border
  EXPECT_EQ(c.x, 225);
  EXPECT_EQ(c.w, 15);
  EXPECT_EQ(c.y, 150);
  EXPECT_EQ(c.h, 30);
}

TEST(ResizeTest, IdentitySizeCopiesExactly) {
  const auto img = pattern_image(17, 13);
  std::vector<uint8_t> out(img.size());
  Resizer r;
  r.resize(img.data(), 17 * 3, {0, 0, 17, 13}, out.data(), 17, 13);
  EXPECT_EQ(out, img);
}

TEST(ResizeTest, CropOffsetsAreRespected) {
  const auto img = pattern_image(17, 13);
  std::vector<uint8_t> out(5 * 4 * 3);
  Resizer r;
  r.resize(img.data(), 17 * 3, {3, 2, 5, 4}, out.data(), 5, 4);
  for (int y = 0; y < 4; ++y) {
    for (int i = 0; i < 15; ++i)
      ASSERT_EQ(out[y * 15 + i], img[(y + 2) * 51 + 9 + i]);
  }
  // Left half black, right half white: a downscaled crop of the right half never sees black,
  // because the filter taps stay inside the crop (as torchvision's crop then resize).
  std::vector<uint8_t> halves(64 * 32 * 3, 0);
  for (int y = 0; y < 32; ++y) {
    for (int x = 32; x < 64; ++x) {
      for (int c = 0; c < 3; ++c)
        halves[(y * 64 + x) * 3 + c] = 255;
    }
  }
  std::vector<uint8_t> small(7 * 5 * 3);
  r.resize(halves.data(), 64 * 3, {32, 0, 32, 32}, small.data(), 7, 5);
  for (uint8_t v : small)
    ASSERT_EQ(v, 255);
}

TEST(ResizeTest, ConstantImageStaysConstant) {
  std::vector<uint8_t> img(100 * 80 * 3);
  for (size_t i = 0; i < img.size(); i += 3) {
    img[i] = 37;
    img[i + 1] = 200;
    img[i + 2] = 255;
  }
  Resizer r;
  for (auto [w, h] : {std::pair{31, 17}, std::pair{150, 90}, std::pair{100, 7}, std::pair{3, 80}}) {
    std::vector<uint8_t> out(static_cast<size_t>(w) * h * 3);
    r.resize(img.data(), 300, {5, 5, 90, 70}, out.data(), w, h);
    for (size_t i = 0; i < out.size(); i += 3) {
      ASSERT_EQ(out[i], 37);
      ASSERT_EQ(out[i + 1], 200);
      ASSERT_EQ(out[i + 2], 255);
    }
  }
}

// Halving a linear ramp v(x) = 10x: away from the borders the triangle filter (support 2 after
// scaling) is symmetric around source position 2i + 0.5, so output i is 10 * (2i + 0.5) = 20i + 5.
TEST(ResizeTest, DownscaledGradientHasExpectedValues) {
  const int n = 24;
  std::vector<uint8_t> horiz(n * n * 3), vert(n * n * 3);
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      for (int c = 0; c < 3; ++c) {
        horiz[(y * n + x) * 3 + c] = static_cast<uint8_t>(10 * x);
        vert[(y * n + x) * 3 + c] = static_cast<uint8_t>(10 * y);
      }
    }
  }
  Resizer r;
  std::vector<uint8_t> out(12 * 12 * 3);
  r.resize(horiz.data(), n * 3, {0, 0, n, n}, out.data(), 12, 12);
  for (int y = 0; y < 12; ++y) {
    for (int x = 1; x < 11; ++x)
      EXPECT_NEAR(out[(y * 12 + x) * 3 + 1], 20 * x + 5, 1) << x;
  }
  r.resize(vert.data(), n * 3, {0, 0, n, n}, out.data(), 12, 12);
  for (int y = 1; y < 11; ++y)
    EXPECT_NEAR(out[(y * 12 + 4) * 3 + 2], 20 * y + 5, 1) << y;
}

// The AVX2 horizontal pass gives the portable loop's bytes: random pixels, tap counts from
// upscales (2 taps) to 12x downscales (past the 17 the portable loop unrolls), odd and even output
// widths, crops against the image's right and bottom edges. The image buffer ends at its last
// pixel, so a load past the crop's row shows under ASan.
TEST(ResizeTest, SimdGivesThePortableBytes) {
  Resizer simd(true), portable(false);
  ASSERT_FALSE(portable.simd());
  if (!simd.simd()) MMPROF_SKIP_WITHOUT("avx2", "this CPU has no AVX2");
  std::mt19937 gen(7);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  std::vector<uint8_t> a, b;
  for (int trial = 0; trial < 300; ++trial) {
    const int w = pick(1, 1500), h = pick(1, 40);
    std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
    for (auto& v : img)
      v = static_cast<uint8_t>(gen());
    const int cw = pick(1, w), ch = pick(1, h);
    const CropRect crop{trial % 3 == 0 ? w - cw : pick(0, w - cw),
                        trial % 2 == 0 ? h - ch : pick(0, h - ch), cw, ch};
    const int out_w = pick(1, 300), out_h = pick(1, 40);
    a.assign(static_cast<size_t>(out_w) * out_h * 3, 0);
    b.assign(a.size(), 1);
    simd.resize(img.data(), w * 3, crop, a.data(), out_w, out_h);
    portable.resize(img.data(), w * 3, crop, b.data(), out_w, out_h);
    ASSERT_EQ(a, b) << "image " << w << "x" << h << ", crop " << cw << "x" << ch << "+" << crop.x
                    << "+" << crop.y << " to " << out_w << "x" << out_h;
  }
}

TEST(TransformTest, ToChwNormalizesExactly) {
  const uint8_t hwc[2 * 2 * 3] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 255, 128, 1};
  Normalization norm;
  std::vector<float> out(12);
  to_chw(hwc, 2, 2, false, DType::float32, norm, out.data());
  for (int c = 0; c < 3; ++c) {
    for (int p = 0; p < 4; ++p) {
      const float expected = (hwc[p * 3 + c] / 255.0f - norm.mean[c]) / norm.stddev[c];
      EXPECT_NEAR(out[c * 4 + p], expected, 1e-5f) << c << " " << p;
    }
  }
  EXPECT_NEAR(out[3], (255 / 255.0f - 0.485f) / 0.229f, 1e-5f);
}

TEST(TransformTest, ToChwFlipsHorizontally) {
  const uint8_t hwc[3 * 2 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  uint8_t out[18];
  to_chw(hwc, 3, 2, true, DType::uint8, Normalization{}, out);
  const uint8_t expected[18] = {7, 4, 1, 16, 13, 10, 8, 5, 2, 17, 14, 11, 9, 6, 3, 18, 15, 12};
  for (int i = 0; i < 18; ++i)
    EXPECT_EQ(out[i], expected[i]) << i;
  std::vector<float> f(18);
  to_chw(hwc, 3, 2, true, DType::float32, Normalization{{0, 0, 0}, {1, 1, 1}}, f.data());
  for (int i = 0; i < 18; ++i)
    EXPECT_NEAR(f[i], expected[i] / 255.0f, 1e-6f) << i;
}

TEST(TransformTest, ToChwUint8CopiesPlanes) {
  const uint8_t hwc[1 * 3 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  uint8_t out[9];
  to_chw(hwc, 3, 1, false, DType::uint8, Normalization{}, out);
  const uint8_t expected[9] = {1, 4, 7, 2, 5, 8, 3, 6, 9};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(out[i], expected[i]) << i;
}

}  // namespace
}  // namespace mmprof
