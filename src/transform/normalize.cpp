#include "transform/normalize.hpp"

#include <cstddef>

namespace mmprof {
namespace {

// One output row of the three planes. The source index runs backwards when flipping; both
// directions are plain strided loops the compiler vectorizes (de-interleaving the triplets).
template <typename T, typename Op>
void row_to_planes(const uint8_t* src, int w, bool hflip, T* d0, T* d1, T* d2, Op op) {
  if (hflip) {
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = src + static_cast<ptrdiff_t>(w - 1 - x) * 3;
      d0[x] = op(p[0], 0);
      d1[x] = op(p[1], 1);
      d2[x] = op(p[2], 2);
    }
  } else {
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = src + static_cast<ptrdiff_t>(x) * 3;
      d0[x] = op(p[0], 0);
      d1[x] = op(p[1], 1);
      d2[x] = op(p[2], 2);
    }
  }
}

template <typename T, typename Op>
void image_to_planes(const uint8_t* hwc, int w, int h, bool hflip, T* dst, Op op) {
  const ptrdiff_t plane = static_cast<ptrdiff_t>(w) * h;
  for (int y = 0; y < h; ++y) {
    T* d0 = dst + static_cast<ptrdiff_t>(y) * w;
    row_to_planes(hwc + static_cast<ptrdiff_t>(y) * w * 3, w, hflip, d0, d0 + plane, d0 + 2 * plane,
                  op);
  }
}

}  // namespace

void to_chw(const uint8_t* hwc, int w, int h, bool hflip, DType dtype, const Normalization& norm,
            void* dst) {
  if (dtype == DType::uint8) {
    image_to_planes(hwc, w, h, hflip, static_cast<uint8_t*>(dst), [](uint8_t v, int) { return v; });
    return;
  }
  // (v / 255 - mean) / std folded into one multiply-add per element: v * scale + offset.
  float scale[3], offset[3];
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * norm.stddev[c]);
    offset[c] = -norm.mean[c] / norm.stddev[c];
  }
  image_to_planes(hwc, w, h, hflip, static_cast<float*>(dst),
                  [&](uint8_t v, int c) { return static_cast<float>(v) * scale[c] + offset[c]; });
}

}  // namespace mmprof
