#pragma once
// The last transform step: HWC uint8 RGB -> CHW in the batch's dtype, optional horizontal flip,
// written straight into the batch slot (the collate buffer) so no separate copy is made.
#include <cstdint>

namespace mmprof {

enum class DType { uint8, float32 };

struct Normalization {
  float mean[3] = {0.485f, 0.456f, 0.406f};  // ImageNet statistics, as torchvision's examples
  float stddev[3] = {0.229f, 0.224f, 0.225f};
};

// float32: dst[c][y][x] = (src[y][x'][c] / 255 - mean[c]) / stddev[c]; uint8: dst = src.
// x' = w-1-x when hflip. dst must hold 3*w*h elements of `dtype`.
void to_chw(const uint8_t* hwc, int w, int h, bool hflip, DType dtype, const Normalization& norm,
            void* dst);

}  // namespace mmprof
