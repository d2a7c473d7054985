#include "transform/resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
void Resizer::compute_taps(int in_size, int out_size, Taps& taps) const {
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
  if (!simd_) return;
  taps.pairs = (width + 1) / 2;
  taps.pair_weights.assign(static_cast<size_t>((out_size + 1) / 2) * taps.pairs * 16, 0);
  for (int i = 0; i < out_size; ++i) {
    const int16_t* row = &taps.weights[static_cast<size_t>(i) * width];
    for (size_t j = 0; j < static_cast<size_t>(taps.pairs); ++j) {
      int16_t* lanes = &taps.pair_weights[(static_cast<size_t>(i / 2) * taps.pairs + j) * 16 +
                                          static_cast<size_t>(i % 2) * 8];
      const int16_t a = row[2 * j];
      const int16_t b = 2 * j + 1 < static_cast<size_t>(width) ? row[2 * j + 1] : int16_t{0};
      for (size_t c = 0; c < 4; ++c)
        lanes[2 * c] = a, lanes[2 * c + 1] = b;
    }
  }
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

#if defined(__x86_64__)
bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

// One row of the horizontal pass, two output pixels at a time: each 128-bit lane holds one output
// pixel. For a pair of taps, 16 bytes from the tap's first triplet are shuffled into int16
// (R_k, R_k+1, G_k, G_k+1, B_k, B_k+1, 0, 0), and one madd against (w_k, w_k+1, ...) adds both
// taps of every channel into 32-bit sums: the portable loop's arithmetic, exactly. A load reads
// up to 10 bytes past the last tap's triplet, so pixels whose loads would leave the crop's row
// (the last few) go through the portable loop, as does an odd last pixel. Returns the number of
// output pixels done.
__attribute__((target("avx2"))) int horizontal_row_avx2(const uint8_t* src, int row_bytes,
                                                        int out_w, const int32_t* first,
                                                        const int16_t* pair_weights, int pairs,
                                                        uint8_t* dst) {
  const __m256i shuffle =
      _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1, 0, -1, 3, -1, 1,
                       -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m256i half = _mm256_set1_epi32(kHalf);
  const int reach = 6 * (pairs - 1) + 16;  // bytes read from a pixel's first triplet on
  int x = 0;
  // first[] never decreases, so the pair fits when its second pixel does.
  for (; x + 1 < out_w && 3 * first[x + 1] + reach <= row_bytes; x += 2) {
    const uint8_t* a = src + static_cast<ptrdiff_t>(first[x]) * 3;
    const uint8_t* b = src + static_cast<ptrdiff_t>(first[x + 1]) * 3;
    const int16_t* w = pair_weights + static_cast<ptrdiff_t>(x / 2) * pairs * 16;
    __m256i acc = half;
    for (ptrdiff_t j = 0; j < pairs; ++j) {
      const __m256i px = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 6 * j))),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 6 * j)), 1);
      const __m256i wk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * j));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_shuffle_epi8(px, shuffle), wk));
    }
    // Sums never exceed 255 << 14 (the weights are non-negative and sum to kOne): the packs
    // do not saturate, as the portable narrow() does not clamp.
    const __m256i sums = _mm256_srai_epi32(acc, kPrecisionBits);
    const __m256i words = _mm256_packs_epi32(sums, sums);
    const __m256i bytes = _mm256_packus_epi16(words, words);
    const auto lo = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(bytes)));
    const auto hi = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1)));
    std::memcpy(dst + static_cast<ptrdiff_t>(x) * 3, &lo, 3);
    std::memcpy(dst + static_cast<ptrdiff_t>(x) * 3 + 3, &hi, 3);
  }
  return x;
}
#endif

}  // namespace

Resizer::Resizer(bool simd) {
#if defined(__x86_64__)
  simd_ = simd && cpu_has_avx2();
#else
  simd_ = false;
  static_cast<void>(simd);
#endif
}

void Resizer::horizontal_pass(const uint8_t* src, int src_stride, int rows, const Taps& taps,
                              uint8_t* dst, int dst_stride) const {
  const RowKernel kernel = pick_kernel(taps.max_taps, std::make_integer_sequence<int, 18>());
  for (int y = 0; y < rows; ++y) {
    const uint8_t* row = src + static_cast<ptrdiff_t>(y) * src_stride;
    uint8_t* out = dst + static_cast<ptrdiff_t>(y) * dst_stride;
    int done = 0;
#if defined(__x86_64__)
    if (simd_) {
      done = horizontal_row_avx2(row, taps.in_size * 3, taps.out_size, taps.first.data(),
                                 taps.pair_weights.data(), taps.pairs, out);
    }
#endif
    kernel(row, taps.out_size - done, taps.first.data() + done,
           taps.weights.data() + static_cast<ptrdiff_t>(done) * taps.max_taps, taps.max_taps,
           out + static_cast<ptrdiff_t>(done) * 3);
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
