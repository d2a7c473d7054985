// image.resizer=swscale: swscale's bilinear crop+resize against mmprof's PIL-equivalent filter.
#include "decode/sws_resize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/test_support.hpp"
#include "transform/resize.hpp"

namespace mmprof {
namespace {

// A smooth image (two gradients and a slow sine), where two antialiasing filters should agree
// closely; the buffer ends exactly kSlack bytes after the last row, as the contract allows.
std::vector<uint8_t> smooth_image(int w, int h) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3 + SwsResizer::kSlack);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(255 * x / (w - 1));
      p[1] = static_cast<uint8_t>(255 * y / (h - 1));
      p[2] = static_cast<uint8_t>(127.5 + 127 * std::sin(x * 0.05 + y * 0.03));
    }
  }
  return img;
}

TEST(SwsResizerTest, AgreesWithTheMmprofFilterOnASmoothImage) {
  const int w = 640, h = 480, out = 224;
  const auto img = smooth_image(w, h);
  // A downscale, an upscale, and a crop touching the last row and column.
  for (const CropRect crop :
       {CropRect{0, 0, w, h}, CropRect{100, 50, 120, 90}, CropRect{w - 301, h - 257, 301, 257}}) {
    std::vector<uint8_t> a(out * out * 3), b(out * out * 3);
    Resizer().resize(img.data(), w * 3, crop, a.data(), out, out);
    SwsResizer().resize(img.data(), w * 3, crop, b.data(), out, out);
    EXPECT_GT(test::psnr(a.data(), b.data(), a.size()), 35.0)
        << crop.x << "," << crop.y << " " << crop.w << "x" << crop.h;
  }
}

TEST(SwsResizerTest, ReusedContextsFollowChangingCropSizes) {
  const int w = 320, h = 240, out = 64;
  const auto img = smooth_image(w, h);
  SwsResizer reused;
  for (const CropRect crop :
       {CropRect{0, 0, 200, 150}, CropRect{10, 20, 50, 60}, CropRect{0, 0, 200, 150}}) {
    std::vector<uint8_t> warm(out * out * 3), fresh(out * out * 3);
    reused.resize(img.data(), w * 3, crop, warm.data(), out, out);
    SwsResizer().resize(img.data(), w * 3, crop, fresh.data(), out, out);
    EXPECT_EQ(warm, fresh) << crop.w << "x" << crop.h;
  }
}

TEST(SwsResizerTest, ReleaseKeepsItWorking) {
  const int w = 64, h = 48, out = 32;
  const auto img = smooth_image(w, h);
  SwsResizer r;
  std::vector<uint8_t> before(out * out * 3), after(out * out * 3);
  r.resize(img.data(), w * 3, {0, 0, w, h}, before.data(), out, out);
  r.release();
  r.resize(img.data(), w * 3, {0, 0, w, h}, after.data(), out, out);
  EXPECT_EQ(before, after);
}

}  // namespace
}  // namespace mmprof
