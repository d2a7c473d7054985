// The arithmetic of decode on the GPU (gpu/yuv_pixel.hpp, which the CUDA kernel runs per pixel),
// run here on the CPU: JPEG YCbCr planes (libjpeg-turbo's, as NVDEC hands them over: NV12 or
// 4:4:4) cropped, resized and converted against mmprof's CPU decode of the same JPEG with the same
// augmentation. The bound is ab's PSNR check's default for lossy factors (30 dB).
#include "gpu/yuv_pixel.hpp"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <vector>

#include "ab/content_check.hpp"
#include "loader/sample_decoder.hpp"

namespace mmprof::gpu {
namespace {

constexpr int kWidth = 640, kHeight = 480, kSize = 64;

// A photo-like test card: smooth ramps with a fine ripple.
std::vector<uint8_t> test_card() {
  std::vector<uint8_t> rgb(3 * kWidth * kHeight);
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      uint8_t* p = &rgb[3 * (y * kWidth + x)];
      p[0] = static_cast<uint8_t>(x * 255 / kWidth);
      p[1] = static_cast<uint8_t>(y * 255 / kHeight);
      p[2] = static_cast<uint8_t>(128 + 90 * std::sin(x / 23.0) * std::cos(y / 17.0));
    }
  }
  return rgb;
}

struct Jpeg {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> y, u, v, uv;  // libjpeg-turbo's planes, and NV12's interleaved chroma
  int chroma_w = 0, chroma_h = 0;
};

Jpeg encode(int subsampling) {
  Jpeg j;
  tjhandle tj = tjInitCompress();
  const std::vector<uint8_t> rgb = test_card();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(
      tjCompress2(tj, rgb.data(), kWidth, 0, kHeight, TJPF_RGB, &out, &size, subsampling, 92, 0),
      0);
  j.bytes.assign(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  tj = tjInitDecompress();
  j.chroma_w = tjPlaneWidth(1, kWidth, subsampling);
  j.chroma_h = tjPlaneHeight(1, kHeight, subsampling);
  j.y.resize(static_cast<size_t>(kWidth) * kHeight);
  j.u.resize(static_cast<size_t>(j.chroma_w) * j.chroma_h);
  j.v.resize(j.u.size());
  unsigned char* planes[3] = {j.y.data(), j.u.data(), j.v.data()};
  EXPECT_EQ(tjDecompressToYUVPlanes(tj, j.bytes.data(), j.bytes.size(), planes, kWidth, nullptr,
                                    kHeight, 0),
            0);
  tjDestroy(tj);
  j.uv.resize(2 * j.u.size());
  for (size_t i = 0; i < j.u.size(); ++i) {
    j.uv[2 * i] = j.u[i];
    j.uv[2 * i + 1] = j.v[i];
  }
  return j;
}

YuvPlanes planes_of(const Jpeg& j, bool nv12) {
  YuvPlanes p;
  p.width = kWidth;
  p.height = kHeight;
  p.nv12 = nv12;
  p.planes[0] = j.y.data();
  p.pitch[0] = kWidth;
  p.planes[1] = nv12 ? j.uv.data() : j.u.data();
  p.pitch[1] = nv12 ? 2 * j.chroma_w : j.chroma_w;
  p.planes[2] = j.v.data();
  p.pitch[2] = j.chroma_w;
  p.full_range = true;  // JPEG (JFIF): full-range BT.601
  return p;
}

// The lowest PSNR over samples with different crops and flips, kernel math against the CPU.
double worst_psnr(const Jpeg& jpeg, bool nv12) {
  Config c;
  c.image.size = kSize;
  c.image.dtype = ImageDType::uint8;
  SampleDecoder cpu(c);
  std::vector<uint8_t> want(3 * kSize * kSize), got(want.size());
  double worst = INFINITY;
  for (uint64_t key = 0; key < 24; ++key) {
    SampleRecord rec, drawn;
    cpu.image(jpeg.bytes, key, rec, want.data());
    const CropRect crop = draw_augmentation(c.loader.seed, key, kWidth, kHeight, drawn).crop;
    TensorRow row;
    row.dst = got.data();
    row.size = kSize;
    row.float32 = false;
    row.flip = drawn.flipped != 0;
    EXPECT_EQ(drawn.flipped, rec.flipped);
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x)
        pixel::write_pixel(planes_of(jpeg, nv12), crop.x, crop.y, crop.w, crop.h, row, x, y);
    worst = std::min(worst, psnr_u8(want.data(), got.data(), want.size()));
  }
  return worst;
}

TEST(YuvPixel, Nv12FromAJpegMatchesTheCpuDecode) {
  EXPECT_GE(worst_psnr(encode(TJSAMP_420), true), 30.0);
}

TEST(YuvPixel, FullChromaMatchesTheCpuDecode) {
  EXPECT_GE(worst_psnr(encode(TJSAMP_444), false), 30.0);
}

// Video's limited range: Y 16..235 and chroma 16..240 stretch to 0..255; BT.709's matrix.
TEST(YuvPixel, LimitedRangeAndBt709Reach0And255) {
  const auto rgb_of = [](uint8_t y, uint8_t u, uint8_t v, bool full, bool bt709) {
    const uint8_t luma[4] = {y, y, y, y};
    const uint8_t uv[2] = {u, v};
    YuvPlanes p;
    p.width = p.height = 2;
    p.planes[0] = luma;
    p.pitch[0] = 2;
    p.planes[1] = uv;
    p.pitch[1] = 2;
    p.full_range = full;
    p.bt709 = bt709;
    std::vector<float> out(3);
    pixel::rgb_at(p, 0, 0, 2, 2, 1, 0, 0, out.data());
    return out;
  };
  EXPECT_EQ(rgb_of(16, 128, 128, false, false), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(rgb_of(235, 128, 128, false, true), (std::vector<float>{255, 255, 255}));
  EXPECT_EQ(rgb_of(255, 128, 128, true, false), (std::vector<float>{255, 255, 255}));
  // Pure red in BT.709 limited range (Y 63, Cb 102, Cr 240).
  const std::vector<float> red = rgb_of(63, 102, 240, false, true);
  EXPECT_NEAR(red[0], 255, 1);
  EXPECT_NEAR(red[1], 0, 1);
  EXPECT_NEAR(red[2], 0, 1);
}

}  // namespace
}  // namespace mmprof::gpu

namespace mmprof::gpu {
namespace {

// Nothing outside the crop is read, shrinking or enlarging, on either axis: a black crop in a
// white frame (full-range 4:4:4) gives a black row, whatever the output size.
TEST(YuvPixel, NothingOutsideTheCropIsRead) {
  constexpr int w = 40, h = 30, cx = 10, cy = 8, cw = 17, ch = 9;
  std::vector<uint8_t> y(w * h, 255), chroma(w * h, 128);
  for (int r = cy; r < cy + ch; ++r)
    for (int c = cx; c < cx + cw; ++c)
      y[r * w + c] = 0;
  YuvPlanes p;
  p.width = w;
  p.height = h;
  p.nv12 = false;
  p.planes[0] = y.data();
  p.planes[1] = p.planes[2] = chroma.data();
  p.pitch[0] = p.pitch[1] = p.pitch[2] = w;
  p.full_range = true;
  for (const int n : {4, 9, 13, 17, 40}) {  // both axes shrink .. one shrinks .. both enlarge
    std::vector<uint8_t> out(3 * n * n, 7);
    TensorRow row;
    row.dst = out.data();
    row.size = n;
    row.float32 = false;
    for (int yy = 0; yy < n; ++yy)
      for (int xx = 0; xx < n; ++xx)
        pixel::write_pixel(p, cx, cy, cw, ch, row, xx, yy);
    EXPECT_EQ(out, std::vector<uint8_t>(out.size(), 0)) << "output size " << n;
  }
}

}  // namespace
}  // namespace mmprof::gpu
