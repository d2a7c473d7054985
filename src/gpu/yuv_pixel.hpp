#pragma once
// One output pixel of yuv_to_tensor (gpu/yuv_tensor.hpp), as host and device code: the CUDA
// kernel runs it once per thread, and the tests run it on the CPU against mmprof's CPU decode, so
// the kernel's arithmetic is checked on machines without a GPU.
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

// The footprint's area-weighted mean (shrinking: the antialiasing a small tensor needs).
MMPROF_HD inline Yuv sample_box(const YuvPlanes& f, float x0, float x1, float y0, float y1) {
  Yuv sum{0, 0, 0};
  float total = 0;
  for (int py = static_cast<int>(floorf(y0)); py < static_cast<int>(ceilf(y1)); ++py) {
    const float wy = overlap(py, y0, y1);
    for (int px = static_cast<int>(floorf(x0)); px < static_cast<int>(ceilf(x1)); ++px) {
      const float w = wy * overlap(px, x0, x1);
      const Yuv s = fetch(f, px, py);
      sum.y += w * s.y;
      sum.u += w * s.u;
      sum.v += w * s.v;
      total += w;
    }
  }
  return {sum.y / total, sum.u / total, sum.v / total};
}

// Bilinear at (sx, sy) within the crop [x0, x1) x [y0, y1) (enlarging).
MMPROF_HD inline Yuv sample_bilinear(const YuvPlanes& f, float sx, float sy, int x0, int y0, int x1,
                                     int y1) {
  sx = fminf(fmaxf(sx, static_cast<float>(x0)), static_cast<float>(x1 - 1));
  sy = fminf(fmaxf(sy, static_cast<float>(y0)), static_cast<float>(y1 - 1));
  const int ix = static_cast<int>(sx), iy = static_cast<int>(sy);
  const int jx = ix + 1 < x1 ? ix + 1 : x1 - 1, jy = iy + 1 < y1 ? iy + 1 : y1 - 1;
  const float fx = sx - static_cast<float>(ix), fy = sy - static_cast<float>(iy);
  const Yuv a = fetch(f, ix, iy), b = fetch(f, jx, iy), c = fetch(f, ix, jy), d = fetch(f, jx, jy);
  const auto mix = [&](float p, float q, float r, float s) {
    return (p * (1 - fx) + q * fx) * (1 - fy) + (r * (1 - fx) + s * fx) * fy;
  };
  return {mix(a.y, b.y, c.y, d.y), mix(a.u, b.u, c.u, d.u), mix(a.v, b.v, c.v, d.v)};
}

// Output pixel (x, y) of the crop (cx, cy, cw, ch) resized to row.size: its three 8-bit values
// (R, G, B, before the flip and normalization).
MMPROF_HD inline void rgb_at(const YuvPlanes& f, int cx, int cy, int cw, int ch, int n, int x,
                             int y, float rgb[3]) {
  const float scale_x = static_cast<float>(cw) / static_cast<float>(n);
  const float scale_y = static_cast<float>(ch) / static_cast<float>(n);
  Yuv s;
  if (scale_x > 1.f || scale_y > 1.f) {
    const float x0 = static_cast<float>(cx) + static_cast<float>(x) * scale_x;
    const float y0 = static_cast<float>(cy) + static_cast<float>(y) * scale_y;
    s = sample_box(f, x0, x0 + fmaxf(scale_x, 1.f), y0, y0 + fmaxf(scale_y, 1.f));
  } else {
    s = sample_bilinear(f, static_cast<float>(cx) + (static_cast<float>(x) + 0.5f) * scale_x - 0.5f,
                        static_cast<float>(cy) + (static_cast<float>(y) + 0.5f) * scale_y - 0.5f,
                        cx, cy, cx + cw, cy + ch);
  }
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
