#pragma once
// Crop geometry of torchvision's RandomResizedCrop, drawn from a per-sample Rng.
#include "util/rng.hpp"

namespace mmprof {

// A rectangle in pixels of some image.
struct CropRect {
  int x = 0, y = 0, w = 0, h = 0;
};

struct CropParams {
  double scale_min = 0.08, scale_max = 1.0;             // fraction of the source area
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // aspect ratio w/h, sampled log-uniformly
};

// torchvision.transforms.RandomResizedCrop.get_params: 10 attempts, then a centre crop clamped to
// the ratio range. Deterministic for a given Rng state.
CropRect random_resized_crop(Rng& rng, int width, int height, const CropParams& params = {});

// The same rectangle in an image scaled by num/den (a DCT-scaled decode), clamped to its bounds.
CropRect scale_crop(const CropRect& crop, int num, int den, int scaled_w, int scaled_h);

// scale_crop, except that an empty crop (w or h 0: none asked) is the whole scaled image.
CropRect crop_in(const CropRect& crop, int num, int den, int scaled_w, int scaled_h);

}  // namespace mmprof
