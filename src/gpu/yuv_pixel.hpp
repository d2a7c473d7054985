#pragma once
// One output pixel of yuv_to_tensor (gpu/yuv_tensor.hpp), as host and device code: the CUDA
// kernel runs it once per thread, and the tests run it on the CPU against mmprof's CPU decode, so
// the kernel's arithmetic is checked on machines without a GPU.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gpu/yuv_tensor.hpp"

#ifdef __CUDACC__
#define MMPROF_HD __host__ __device__
#else
#define MMPROF_HD
#endif

namespace mmprof::gpu::pixel {

#ifndef __CUDACC__
using std::max;
using std::min;
#endif

struct Yuv {
  float y, u, v;
};

MMPROF_HD inline Yuv fetch(const YuvPlanes& f, int px, int py) {
  const uint8_t* yrow = f.planes[0] + static_cast<size_t>(py) * f.pitch[0];
  if (f.nv12) {
    const uint8_t* uv = f.planes[1] + static_cast<size_t>(py / 2) * f.pitch[1] + (px / 2) * 2;
    return {static_cast<float>(yrow[px]), static_cast<float>(uv[0]), static_cast<float>(uv[1])};
  }
  return {static_cast<float>(yrow[px]),
          static_cast<float>(f.planes[1][static_cast<size_t>(py) * f.pitch[1] + px]),
          static_cast<float>(f.planes[2][static_cast<size_t>(py) * f.pitch[2] + px])};
}

// The weight of source pixel p (covering [p, p+1)) inside the footprint [a, b).
MMPROF_HD inline float overlap(int p, float a, float b) {
  return fmaxf(0.f, fminf(b, static_cast<float>(p) + 1.f) - fmaxf(a, static_cast<float>(p)));
}

// The footprint of output index i along one axis of a crop starting at c, `scale` source pixels
// per output pixel: shrinking, the output pixel's own span (a box filter); enlarging, a span of
// one pixel centred on the sample point, whose overlaps are the linear interpolation's weights.
struct Span {
  float a, b;
};
MMPROF_HD inline Span footprint(int c, int i, float scale) {
  if (scale > 1.f) {
    const float a = static_cast<float>(c) + static_cast<float>(i) * scale;
    return {a, a + scale};
  }
  const float a = static_cast<float>(c) + (static_cast<float>(i) + 0.5f) * scale - 0.5f;
  return {a, a + 1.f};
}

// The area-weighted mean of the pixels of [x0, x1) x [y0, y1) inside the crop [cx, cx + cw) x
// [cy, cy + ch): nothing outside the crop is read, and the weights are normalized over what is
// inside (the crop's edge stands for what lies beyond it).
MMPROF_HD inline Yuv sample(const YuvPlanes& f, Span sx, Span sy, int cx, int cy, int cw, int ch) {
  const int px0 = max(static_cast<int>(floorf(sx.a)), cx);
  const int px1 = min(static_cast<int>(ceilf(sx.b)), cx + cw);
  const int py0 = max(static_cast<int>(floorf(sy.a)), cy);
  const int py1 = min(static_cast<int>(ceilf(sy.b)), cy + ch);
  Yuv sum{0, 0, 0};
  float total = 0;
  for (int py = py0; py < py1; ++py) {
    const float wy = overlap(py, sy.a, sy.b);
    for (int px = px0; px < px1; ++px) {
      const float w = wy * overlap(px, sx.a, sx.b);
      if (w <= 0.f) continue;
      const Yuv s = fetch(f, px, py);
      sum.y += w * s.y;
      sum.u += w * s.u;
      sum.v += w * s.v;
      total += w;
    }
  }
  if (total <= 0.f)
    return fetch(f, min(max(static_cast<int>(sx.a), cx), cx + cw - 1),
                 min(max(static_cast<int>(sy.a), cy), cy + ch - 1));
  return {sum.y / total, sum.u / total, sum.v / total};
}

// Output pixel (x, y) of the crop (cx, cy, cw, ch) resized to n x n: its three 8-bit values
// (R, G, B, before the flip and normalization).
MMPROF_HD inline void rgb_at(const YuvPlanes& f, int cx, int cy, int cw, int ch, int n, int x,
                             int y, float rgb[3]) {
  const Span sx = footprint(cx, x, static_cast<float>(cw) / static_cast<float>(n));
  const Span sy = footprint(cy, y, static_cast<float>(ch) / static_cast<float>(n));
  const Yuv s = sample(f, sx, sy, cx, cy, cw, ch);
  // YCbCr to R'G'B' (BT.601 or BT.709; limited range stretched to 0..255).
  const float luma = f.full_range ? s.y : (s.y - 16.f) * (255.f / 219.f);
  const float chroma = f.full_range ? 1.f : 255.f / 224.f;
  const float cb = (s.u - 128.f) * chroma, cr = (s.v - 128.f) * chroma;
  if (f.bt709) {
    rgb[0] = luma + 1.5748f * cr;
    rgb[1] = luma - 0.187324f * cb - 0.468124f * cr;
    rgb[2] = luma + 1.8556f * cb;
  } else {
    rgb[0] = luma + 1.402f * cr;
    rgb[1] = luma - 0.344136f * cb - 0.714136f * cr;
    rgb[2] = luma + 1.772f * cb;
  }
  for (int c = 0; c < 3; ++c)
    rgb[c] = rintf(fminf(fmaxf(rgb[c], 0.f), 255.f));
}

// Writes output pixel (x, y) into the CHW row: flipped, and normalized for float32.
MMPROF_HD inline void write_pixel(const YuvPlanes& f, int cx, int cy, int cw, int ch,
                                  const TensorRow& row, int x, int y) {
  const int n = row.size;
  float rgb[3];
  rgb_at(f, cx, cy, cw, ch, n, x, y, rgb);
  const size_t plane = static_cast<size_t>(n) * static_cast<size_t>(n);
  const size_t at = static_cast<size_t>(y) * static_cast<size_t>(n) +
                    static_cast<size_t>(row.flip ? n - 1 - x : x);
  for (int c = 0; c < 3; ++c) {
    if (row.float32) {
      static_cast<float*>(row.dst)[static_cast<size_t>(c) * plane + at] =
          (rgb[c] / 255.f - row.mean[c]) / row.stddev[c];
    } else {
      static_cast<uint8_t*>(row.dst)[static_cast<size_t>(c) * plane + at] =
          static_cast<uint8_t>(rgb[c]);
    }
  }
}

}  // namespace mmprof::gpu::pixel
