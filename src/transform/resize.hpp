#pragma once
// Resampling of packed RGB24 images: crop a rectangle and resize it to a target size in one pass.
#include <cstdint>
#include <vector>

#include "transform/crop.hpp"

namespace mmprof {

// Separable resize with PIL's antialiasing convolution (triangle filter whose support widens with
// the downscale factor, as torchvision's antialias=True). Coefficient tables and the intermediate
// buffer are kept between calls: one Resizer per worker, no per-sample heap traffic once warm.
//
// The horizontal pass (a gather of RGB triplets per output pixel) has an AVX2 kernel, used when
// `simd` is asked for (image.simd) and the CPU has AVX2: two output pixels per 256-bit register,
// two taps per multiply-add, in the same integer arithmetic as the portable loop, so its bytes are
// the same (tested on every tap count). The vertical pass is contiguous multiply-adds that the
// compiler vectorizes itself.
class Resizer {
 public:
  explicit Resizer(bool simd = true);
  // Whether the horizontal pass runs the AVX2 kernel: asked for and available on this CPU.
  bool simd() const noexcept { return simd_; }
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
    // The AVX2 kernel's copy of the weights: taps in pairs (a zero weight pads an odd count), each
    // pair as 8 int16 (w_k, w_k+1 for each of R, G, B and a spare lane), the pairs of output
    // pixels 2i and 2i+1 interleaved so that one 256-bit load serves both.
    std::vector<int16_t> pair_weights;
    int pairs = 0;
  };
  void compute_taps(int in_size, int out_size, Taps& taps) const;
  void horizontal_pass(const uint8_t* src, int src_stride, int rows, const Taps& taps, uint8_t* dst,
                       int dst_stride) const;
  static void vertical_pass(const uint8_t* src, int src_stride, const Taps& taps, int row_bytes,
                            uint8_t* dst, int dst_stride);
  bool simd_;
  Taps horizontal_, vertical_;
  std::vector<uint8_t> temp_;  // the horizontal pass's output, grows only
};

}  // namespace mmprof
