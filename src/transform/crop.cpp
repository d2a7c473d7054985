#include "transform/crop.hpp"

#include <algorithm>
#include <cmath>

namespace mmprof {
namespace {

// Python's round(): half to even, which std::nearbyint gives in the default rounding mode.
int py_round(double v) {
  return static_cast<int>(std::nearbyint(v));
}

// torch.randint(0, n + 1) for the crop origin: uniform over [0, n].
int draw_origin(Rng& rng, int n) {
  return static_cast<int>(rng.range(0, n));
}

// The fallback of get_params: the whole image, narrowed to the nearest allowed aspect ratio.
CropRect centre_crop(int width, int height, const CropParams& p) {
  const double in_ratio = static_cast<double>(width) / height;
  const double lo = std::min(p.ratio_min, p.ratio_max);
  const double hi = std::max(p.ratio_min, p.ratio_max);
  int w = width, h = height;
  if (in_ratio < lo) {
    h = std::clamp(py_round(w / lo), 1, height);
  } else if (in_ratio > hi) {
    w = std::clamp(py_round(h * hi), 1, width);
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

}  // namespace

// torchvision.transforms.RandomResizedCrop.get_params (torchvision 0.14), drawing the same
// quantities in the same order from our Rng instead of torch's generator.
CropRect random_resized_crop(Rng& rng, int width, int height, const CropParams& params) {
  if (width <= 0 || height <= 0) return {};
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(params.ratio_min), log_hi = std::log(params.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(params.scale_min, params.scale_max);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const int w = py_round(std::sqrt(target_area * aspect));
    const int h = py_round(std::sqrt(target_area / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int y = draw_origin(rng, height - h);
      const int x = draw_origin(rng, width - w);
      return {x, y, w, h};
    }
  }
  return centre_crop(width, height, params);
}

// Start rounded down and end rounded up, so the scaled rectangle covers every source pixel of the
// crop; at least one pixel wide and high.
CropRect scale_crop(const CropRect& crop, int num, int den, int scaled_w, int scaled_h) {
  const auto lo = [&](int v) { return static_cast<int>((static_cast<int64_t>(v) * num) / den); };
  const auto hi = [&](int v) {
    return static_cast<int>((static_cast<int64_t>(v) * num + den - 1) / den);
  };
  const int x0 = std::clamp(lo(crop.x), 0, std::max(scaled_w - 1, 0));
  const int y0 = std::clamp(lo(crop.y), 0, std::max(scaled_h - 1, 0));
  const int x1 = std::clamp(hi(crop.x + crop.w), x0 + 1, std::max(scaled_w, x0 + 1));
  const int y1 = std::clamp(hi(crop.y + crop.h), y0 + 1, std::max(scaled_h, y0 + 1));
  return {x0, y0, x1 - x0, y1 - y0};
}

CropRect crop_in(const CropRect& crop, int num, int den, int scaled_w, int scaled_h) {
  if (crop.w <= 0 || crop.h <= 0) return {0, 0, scaled_w, scaled_h};
  return scale_crop(crop, num, den, scaled_w, scaled_h);
}

}  // namespace mmprof
