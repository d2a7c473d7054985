#pragma once
// Resampling of packed RGB24 images: crop a rectangle and resize it to a target size in one pass.
#include <cstdint>
#include <vector>

#include "transform/crop.hpp"

namespace mmprof {

// Separable resize with PIL's antialiasing convolution (triangle filter whose support widens with
// the downscale factor, as torchvision's antialias=True). Coefficient tables and the intermediate
// buffer are kept between calls: one Resizer per worker, no per-sample heap traffic once warm.
class Resizer {
 public:
  // src: RGB24 rows of `src_stride` bytes. Writes dst_w*dst_h*3 bytes to dst (stride dst_w*3).
  void resize(const uint8_t* src, int src_stride, const CropRect& crop, uint8_t* dst, int dst_w,
              int dst_h);
  // Frees the intermediate buffer (loader.buffer_reuse=false); the tables stay.
  void release() noexcept { std::vector<uint8_t>().swap(temp_); }

 private:
  struct Taps {
    std::vector<int32_t> first;    // first source index per output pixel
    std::vector<int16_t> weights;  // fixed-point weights, `max_taps` per output pixel
    int max_taps = 0;  // taps per output pixel, the same for all (zero weights pad the borders)
    int in_size = 0, out_size = 0;  // the sizes the table was computed for (a cache key)
  };
  static void compute_taps(int in_size, int out_size, Taps& taps);
  static void horizontal_pass(const uint8_t* src, int src_stride, int rows, const Taps& taps,
                              uint8_t* dst, int dst_stride);
  static void vertical_pass(const uint8_t* src, int src_stride, const Taps& taps, int row_bytes,
                            uint8_t* dst, int dst_stride);
  Taps horizontal_, vertical_;
  std::vector<uint8_t> temp_;  // the horizontal pass's output, grows only
};

}  // namespace mmprof
