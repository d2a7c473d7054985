#include "transform/resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

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

uint8_t narrow(int32_t acc) {
  return static_cast<uint8_t>(acc >> kPrecisionBits);
}

}  // namespace

// PIL ImagingResample precompute_coeffs (antialias): the filter support grows with the downscale
// factor, centres sit at (i + 0.5) * scale, taps are clamped to the input. The input here is the
// crop itself (as torchvision's crop-then-resize), so taps never reach outside the crop. Unlike
// PIL every output pixel gets the same number of taps (windows at the right border are shifted
// left and padded with zero weights), so the horizontal kernel runs a compile-time trip count.
void Resizer::compute_taps(int in_size, int out_size, Taps& taps) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;
  const int width = std::min(static_cast<int>(std::ceil(support)) * 2 + 1, in_size);
  taps.max_taps = width;
  taps.first.resize(out_size);
  taps.weights.assign(static_cast<size_t>(out_size) * width, 0);
  std::vector<double> w(width);
  for (int i = 0; i < out_size; ++i) {
    const double centre = (i + 0.5) * scale;
    // PIL's own rounding (truncating x + 0.5), kept bit for bit so the taps are PIL's.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const int lo = std::max(static_cast<int>(centre - support + 0.5), 0);
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const int hi = std::min(static_cast<int>(centre + support + 0.5), in_size);
    const int first = std::min(lo, in_size - width);
    std::fill(w.begin(), w.end(), 0.0);
    double total = 0;
    for (int x = lo; x < hi && x - first < width; ++x) {
      w[x - first] = triangle((x - centre + 0.5) / filter_scale);
      total += w[x - first];
    }
    for (double& v : w)
      v = total > 0 ? v / total : 0.0;
    if (total <= 0) w[std::clamp(lo - first, 0, width - 1)] = 1.0;
    taps.first[i] = first;
    quantize(w.data(), width, &taps.weights[static_cast<size_t>(i) * width]);
  }
  taps.in_size = in_size;
  taps.out_size = out_size;
}

namespace {

// One row of the horizontal pass: each output pixel gathers N neighbouring RGB triplets into three
// accumulators. N is a template parameter for the common widths so the tap loop unrolls fully.
template <int N>
void horizontal_row(const uint8_t* src, int out_w, const int32_t* first, const int16_t* weights,
                    int n_runtime, uint8_t* dst) {
  const int n = N > 0 ? N : n_runtime;
  for (int x = 0; x < out_w; ++x) {
    const uint8_t* p = src + static_cast<ptrdiff_t>(first[x]) * 3;
    const int16_t* w = weights + static_cast<ptrdiff_t>(x) * n;
    int32_t r = kHalf, g = kHalf, b = kHalf;
    for (int k = 0; k < n; ++k) {
      r += p[3 * static_cast<ptrdiff_t>(k)] * w[k];
      g += p[3 * k + 1] * w[k];
      b += p[3 * k + 2] * w[k];
    }
    dst[3 * static_cast<ptrdiff_t>(x)] = narrow(r);
    dst[3 * x + 1] = narrow(g);
    dst[3 * x + 2] = narrow(b);
  }
}

using RowKernel = void (*)(const uint8_t*, int, const int32_t*, const int16_t*, int, uint8_t*);

// Widths 1..17 cover downscales up to 8x; larger ones use the runtime loop (N = 0).
template <int... N>
constexpr RowKernel pick_kernel(int n, std::integer_sequence<int, N...>) {
  constexpr RowKernel table[] = {horizontal_row<N>...};
  return n < static_cast<int>(sizeof...(N)) ? table[n] : horizontal_row<0>;
}

}  // namespace

void Resizer::horizontal_pass(const uint8_t* src, int src_stride, int rows, const Taps& taps,
                              uint8_t* dst, int dst_stride) {
  const RowKernel kernel = pick_kernel(taps.max_taps, std::make_integer_sequence<int, 18>());
  for (int y = 0; y < rows; ++y) {
    kernel(src + static_cast<ptrdiff_t>(y) * src_stride, taps.out_size, taps.first.data(),
           taps.weights.data(), taps.max_taps, dst + static_cast<ptrdiff_t>(y) * dst_stride);
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
      for (int k = 0; k < taps.max_taps; ++k) {
        const int32_t wk = w[k];
        if (wk == 0) continue;  // border padding
        const uint8_t* row = top + static_cast<ptrdiff_t>(k) * src_stride + x0;
        for (int i = 0; i < n; ++i)
          acc[i] += row[i] * wk;
      }
      for (int i = 0; i < n; ++i)
        d[x0 + i] = narrow(acc[i]);
    }
  }
}

void Resizer::resize(const uint8_t* src, int src_stride, const CropRect& crop, uint8_t* dst,
                     int dst_w, int dst_h) {
  if (crop.w <= 0 || crop.h <= 0 || dst_w <= 0 || dst_h <= 0 || crop.x < 0 || crop.y < 0) {
    throw std::invalid_argument("Resizer::resize: empty or negative rectangle");
  }
  const uint8_t* base =
      src + static_cast<ptrdiff_t>(crop.y) * src_stride + static_cast<ptrdiff_t>(crop.x) * 3;
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
