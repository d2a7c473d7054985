#include "transform/resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace mmprof {
namespace {

// Fixed-point precision of the weights. A weight never exceeds 1.0, so 1 << 14 fits int16, and
// 255 * (1 << 14) summed over the taps fits int32 with room to spare.
constexpr int kPrecisionBits = 14;
constexpr int32_t kOne = 1 << kPrecisionBits;
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

// PIL's bilinear ("triangle") filter, support 1.
double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Rounds normalized weights to fixed point and moves the rounding residue onto the largest weight,
// so every row of the table sums to exactly kOne: a constant image stays exactly constant, and
// since all weights are non-negative no output can exceed 255 (no clamping in the inner loops).
void quantize(const double* w, int n, int16_t* out) {
  int32_t sum = 0;
  int largest = 0;
  for (int k = 0; k < n; ++k) {
    out[k] = static_cast<int16_t>(std::lround(w[k] * kOne));
    sum += out[k];
    if (w[k] > w[largest]) largest = k;
  }
  out[largest] = static_cast<int16_t>(out[largest] + (kOne - sum));
}

uint8_t narrow(int32_t acc) { return static_cast<uint8_t>(acc >> kPrecisionBits); }

}  // namespace

// PIL ImagingResample precompute_coeffs (antialias): the filter support grows with the downscale
// factor, centres sit at (i + 0.5) * scale, taps are clamped to the input. The input here is the
// crop itself (as torchvision's crop-then-resize), so taps never reach outside the crop.
void Resizer::compute_taps(int in_size, int out_size, Taps& taps) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;
  taps.max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  taps.first.resize(out_size);
  taps.count.resize(out_size);
  taps.weights.assign(static_cast<size_t>(out_size) * taps.max_taps, 0);
  std::vector<double> w(taps.max_taps);
  for (int i = 0; i < out_size; ++i) {
    const double centre = (i + 0.5) * scale;
    const int lo = std::max(static_cast<int>(centre - support + 0.5), 0);
    const int hi = std::min(static_cast<int>(centre + support + 0.5), in_size);
    const int n = std::min(hi - lo, taps.max_taps);
    double total = 0;
    for (int k = 0; k < n; ++k) {
      w[k] = triangle((k + lo - centre + 0.5) / filter_scale);
      total += w[k];
    }
    for (int k = 0; k < n; ++k) w[k] = total > 0 ? w[k] / total : (k == 0 ? 1.0 : 0.0);
    taps.first[i] = lo;
    taps.count[i] = n;
    quantize(w.data(), n, &taps.weights[static_cast<size_t>(i) * taps.max_taps]);
  }
  taps.in_size = in_size;
  taps.out_size = out_size;
}

// One output pixel gathers `count` neighbouring RGB triplets; three accumulators per pixel.
void Resizer::horizontal_pass(const uint8_t* src, int src_stride, int rows, const Taps& taps,
                              uint8_t* dst, int dst_stride) {
  const int out_w = taps.out_size;
  for (int y = 0; y < rows; ++y) {
    const uint8_t* s = src + static_cast<ptrdiff_t>(y) * src_stride;
    uint8_t* d = dst + static_cast<ptrdiff_t>(y) * dst_stride;
    for (int x = 0; x < out_w; ++x) {
      const uint8_t* p = s + taps.first[x] * 3;
      const int16_t* w = &taps.weights[static_cast<size_t>(x) * taps.max_taps];
      int32_t r = kHalf, g = kHalf, b = kHalf;
      for (int k = 0, n = taps.count[x]; k < n; ++k) {
        r += p[3 * k] * w[k];
        g += p[3 * k + 1] * w[k];
        b += p[3 * k + 2] * w[k];
      }
      d[3 * x] = narrow(r);
      d[3 * x + 1] = narrow(g);
      d[3 * x + 2] = narrow(b);
    }
  }
}

// Whole rows are weighted and summed, so the inner loop is a plain multiply-add over contiguous
// bytes that the compiler vectorizes. Rows are processed in column blocks so the accumulators
// stay in L1 and live on the stack (no heap traffic).
void Resizer::vertical_pass(const uint8_t* src, int src_stride, const Taps& taps, int row_bytes,
                            uint8_t* dst, int dst_stride) {
  constexpr int kBlock = 1024;
  int32_t acc[kBlock];
  for (int y = 0; y < taps.out_size; ++y) {
    const int16_t* w = &taps.weights[static_cast<size_t>(y) * taps.max_taps];
    const uint8_t* top = src + static_cast<ptrdiff_t>(taps.first[y]) * src_stride;
    uint8_t* d = dst + static_cast<ptrdiff_t>(y) * dst_stride;
    for (int x0 = 0; x0 < row_bytes; x0 += kBlock) {
      const int n = std::min(kBlock, row_bytes - x0);
      std::fill_n(acc, n, kHalf);
      for (int k = 0; k < taps.count[y]; ++k) {
        const uint8_t* row = top + static_cast<ptrdiff_t>(k) * src_stride + x0;
        const int32_t wk = w[k];
        for (int i = 0; i < n; ++i) acc[i] += row[i] * wk;
      }
      for (int i = 0; i < n; ++i) d[x0 + i] = narrow(acc[i]);
    }
  }
}

void Resizer::resize(const uint8_t* src, int src_stride, const CropRect& crop, uint8_t* dst,
                     int dst_w, int dst_h) {
  if (crop.w <= 0 || crop.h <= 0 || dst_w <= 0 || dst_h <= 0 || crop.x < 0 || crop.y < 0) {
    throw std::invalid_argument("Resizer::resize: empty or negative rectangle");
  }
  const uint8_t* base = src + static_cast<ptrdiff_t>(crop.y) * src_stride + crop.x * 3;
  const int dst_stride = dst_w * 3;
  // As PIL, a pass whose size does not change is skipped: an identity resize is a copy.
  const bool do_h = crop.w != dst_w, do_v = crop.h != dst_h;
  if (do_h && (horizontal_.in_size != crop.w || horizontal_.out_size != dst_w)) {
    compute_taps(crop.w, dst_w, horizontal_);
  }
  if (do_v && (vertical_.in_size != crop.h || vertical_.out_size != dst_h)) {
    compute_taps(crop.h, dst_h, vertical_);
  }
  if (!do_h && !do_v) {
    for (int y = 0; y < dst_h; ++y) {
      std::memcpy(dst + static_cast<ptrdiff_t>(y) * dst_stride,
                  base + static_cast<ptrdiff_t>(y) * src_stride, dst_stride);
    }
  } else if (!do_v) {
    horizontal_pass(base, src_stride, crop.h, horizontal_, dst, dst_stride);
  } else if (!do_h) {
    vertical_pass(base, src_stride, vertical_, dst_stride, dst, dst_stride);
  } else {
    const size_t need = static_cast<size_t>(crop.h) * dst_stride;
    if (temp_.size() < need) temp_.resize(need);
    horizontal_pass(base, src_stride, crop.h, horizontal_, temp_.data(), dst_stride);
    vertical_pass(temp_.data(), dst_stride, vertical_, dst_stride, dst, dst_stride);
  }
}

}  // namespace mmprof
