#include "gen/image_synth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace mmprof::gen {
namespace {

// Texture is computed at 1/2 resolution and bilinearly upsampled: 4x fewer noise evaluations,
// while the full-resolution sensor noise and shape edges keep the fine detail JPEG has to code.
constexpr int kShift = 1;
constexpr int kTableSize = 1 << 16;
constexpr int kChunk = 8192;  // noise applied per chunk, each at its own table offset

struct Rgb {
  int r = 0, g = 0, b = 0;
};

Rgb hsv_to_rgb(double h, double s, double v) {
  const double c = v * s, hp = h * 6.0, x = c * (1.0 - std::fabs(std::fmod(hp, 2.0) - 1.0));
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c, g = x;
  } else if (hp < 2) {
    r = x, g = c;
  } else if (hp < 3) {
    g = c, b = x;
  } else if (hp < 4) {
    g = x, b = c;
  } else if (hp < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  auto to8 = [&](double u) { return static_cast<int>(std::lround((u + v - c) * 255.0)); };
  return {to8(r), to8(g), to8(b)};
}

Rgb random_color(Rng& rng) {
  const double h = rng.uniform(), s = rng.uniform(0.1, 0.7), v = rng.uniform(0.25, 0.92);
  return hsv_to_rgb(h, s, v);
}

// A shared table of ~N(0, 32) values (Irwin-Hall of four bytes), built once from a fixed seed.
const std::array<int8_t, kTableSize + kChunk>& noise_table() {
  static const auto table = [] {
    std::array<int8_t, kTableSize + kChunk> t{};
    Rng rng(0x5e7502);
    for (auto& v : t) {
      const uint64_t r = rng.next();
      const int sum =
          static_cast<int>((r & 255) + ((r >> 8) & 255) + ((r >> 16) & 255) + ((r >> 24) & 255));
      v = static_cast<int8_t>(std::clamp(((sum - 510) * 28) / 128, -127, 127));
    }
    return t;
  }();
  return table;
}

// Adds one octave of value noise (lattice every 2^cell_shift reduced pixels) times amp/256.
void add_octave(Rng& rng, int lw, int lh, int cell_shift, int amp, int32_t* field,
                std::vector<int16_t>& lattice) {
  const int c = 1 << cell_shift;
  const int gw = (lw >> cell_shift) + 2, gh = (lh >> cell_shift) + 2;
  lattice.resize(static_cast<size_t>(gw) * gh);
  for (auto& v : lattice)
    v = static_cast<int16_t>(static_cast<int>(rng.next() >> 56) - 128);
  for (int y = 0; y < lh; ++y) {
    const int gy = y >> cell_shift, fy = y & (c - 1);
    const int16_t* r0 = lattice.data() + static_cast<size_t>(gy) * gw;
    const int16_t* r1 = r0 + gw;
    int32_t* f = field + static_cast<size_t>(y) * lw;
    for (int x = 0; x < lw; ++x) {
      const int gx = x >> cell_shift, fx = x & (c - 1);
      const int top = r0[gx] * (c - fx) + r0[gx + 1] * fx;
      const int bottom = r1[gx] * (c - fx) + r1[gx + 1] * fx;
      f[x] += ((top * (c - fy) + bottom * fy) >> (2 * cell_shift)) * amp;
    }
  }
}

struct Palette {
  Rgb c0, c1, c2;
  double gx = 0, gy = 0;  // gradient direction
  int contrast = 40;      // texture amplitude in grey levels
};

// Colours the reduced image: gradient c0->c1, patches of c2 where field2 is high, texture on top.
void colour_low(const Palette& p, int lw, int lh, const int32_t* tex, const int32_t* mix,
                uint8_t* out) {
  const double span = std::fabs(p.gx) * lw + std::fabs(p.gy) * lh + 1e-9;
  const double origin = std::min(0.0, p.gx * lw) + std::min(0.0, p.gy * lh);
  for (int y = 0; y < lh; ++y) {
    for (int x = 0; x < lw; ++x) {
      const size_t i = static_cast<size_t>(y) * lw + x;
      const int g = static_cast<int>((p.gx * x + p.gy * y - origin) / span * 256.0);
      const int m = std::clamp((mix[i] >> 8) * 6, 0, 256);
      const int t = (tex[i] >> 8) * p.contrast / 128;
      const int c0[3] = {p.c0.r, p.c0.g, p.c0.b}, c1[3] = {p.c1.r, p.c1.g, p.c1.b};
      const int c2[3] = {p.c2.r, p.c2.g, p.c2.b};
      for (int k = 0; k < 3; ++k) {
        const int base = c0[k] + (c1[k] - c0[k]) * g / 256;
        out[i * 3 + k] = clamp8(base + (c2[k] - base) * m / 256 + t);
      }
    }
  }
}

void upsample(const uint8_t* low, int lw, int width, int height, std::vector<int32_t>& row,
              uint8_t* out) {
  constexpr int f = 1 << kShift;
  row.resize(static_cast<size_t>(lw) * 3);
  for (int y = 0; y < height; ++y) {
    const int ly = y >> kShift, fy = y & (f - 1);
    const uint8_t* a = low + static_cast<size_t>(ly) * lw * 3;
    const uint8_t* b = a + static_cast<size_t>(lw) * 3;
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = a[i] * (f - fy) + b[i] * fy;
    uint8_t* o = out + static_cast<size_t>(y) * width * 3;
    for (int x = 0; x < width; ++x) {
      const int lx = x >> kShift, fx = x & (f - 1);
      const int32_t* r = row.data() + static_cast<std::ptrdiff_t>(lx) * 3;
      for (int k = 0; k < 3; ++k) {
        o[x * 3 + k] =
            static_cast<uint8_t>((r[k] * (f - fx) + r[k + 3] * fx + f * f / 2) >> (2 * kShift));
      }
    }
  }
}

// A soft-edged ellipse that keeps half of the texture under it, like a textured object.
void draw_shape(Rng& rng, RgbImage& img) {
  const double w = img.width, h = img.height;
  const double cx = rng.uniform(0, w), cy = rng.uniform(0, h);
  const double rx = std::min(w, h) * rng.uniform(0.05, 0.3), ry = rx * rng.uniform(0.5, 1.6);
  const double k = std::min(rx, ry) / (2.0 * rng.uniform(1.0, 6.0));
  const double opacity = rng.uniform(0.55, 0.95);
  const Rgb c = random_color(rng);
  const int col[3] = {c.r, c.g, c.b};
  const int x0 = std::max(0, static_cast<int>(cx - rx)), x1 = std::min(img.width, int(cx + rx) + 1);
  const int y0 = std::max(0, static_cast<int>(cy - ry)),
            y1 = std::min(img.height, int(cy + ry) + 1);
  for (int y = y0; y < y1; ++y) {
    const double ny = (y + 0.5 - cy) / ry;
    uint8_t* row = img.pixels.data() + static_cast<size_t>(y) * img.width * 3;
    for (int x = x0; x < x1; ++x) {
      const double nx = (x + 0.5 - cx) / rx, d2 = nx * nx + ny * ny;
      if (d2 >= 1.0) continue;
      const int a = static_cast<int>(std::min(1.0, (1.0 - d2) * k) * opacity * 256.0);
      for (int ch = 0; ch < 3; ++ch) {
        const int p = row[x * 3 + ch], target = col[ch] + (p - 128) / 2;
        row[x * 3 + ch] = clamp8(p + (((target - p) * a) >> 8));
      }
    }
  }
}

}  // namespace

void add_sensor_noise(uint8_t* data, size_t n, double sigma, uint64_t phase) {
  const auto& table = noise_table();
  const int scale = static_cast<int>(std::lround(sigma * 8.0));  // table sigma 32 -> 32*s/256
  for (size_t done = 0, chunk = 0; done < n; done += kChunk, ++chunk) {
    const int8_t* t = table.data() + (splitmix64(phase + chunk) & (kTableSize - 1));
    const size_t m = std::min<size_t>(kChunk, n - done);
    uint8_t* d = data + done;
    for (size_t i = 0; i < m; ++i)
      d[i] = clamp8(d[i] + ((t[i] * scale) >> 8));
  }
}

ImageLook synthesize_image(Rng& rng, int width, int height, ImageSynthScratch& s, RgbImage& out) {
  const int lw = (width >> kShift) + 2, lh = (height >> kShift) + 2;
  const size_t ln = static_cast<size_t>(lw) * lh;
  s.field.assign(2 * ln, 0);
  Palette p{random_color(rng), random_color(rng), random_color(rng)};
  const double angle = rng.uniform(0, 2 * M_PI);
  p.gx = std::cos(angle), p.gy = std::sin(angle);
  p.contrast = static_cast<int>(rng.range(40, 120));
  // Persistence sets roughness: high values give foliage-like detail, low ones smooth walls.
  const double persistence = rng.uniform(0.6, 0.95);
  double amp = 256.0 * (1 - persistence);
  for (int cell = 6; cell >= 0; --cell, amp *= persistence)
    add_octave(rng, lw, lh, cell, static_cast<int>(amp) + 1, s.field.data(), s.lattice);
  add_octave(rng, lw, lh, 6, 256, s.field.data() + ln, s.lattice);
  s.low_rgb.resize(ln * 3);
  colour_low(p, lw, lh, s.field.data(), s.field.data() + ln, s.low_rgb.data());
  out.width = width, out.height = height;
  out.pixels.resize(static_cast<size_t>(width) * height * 3);
  upsample(s.low_rgb.data(), lw, width, height, s.row, out.pixels.data());
  ImageLook look{color_name(p.c0.r, p.c0.g, p.c0.b), color_name(p.c2.r, p.c2.g, p.c2.b), 0,
                 persistence > 0.8};
  look.shapes = static_cast<int>(rng.range(1, 5));
  for (int i = 0; i < look.shapes; ++i)
    draw_shape(rng, out);
  add_sensor_noise(out.pixels.data(), out.pixels.size(), rng.uniform(1.5, 5.0), rng.next());
  return look;
}

const char* color_name(int r, int g, int b) {
  struct Named {
    const char* name;
    int r, g, b;
  };
  static constexpr Named kNames[] = {
      {"red", 200, 40, 40},    {"orange", 230, 140, 40}, {"yellow", 225, 210, 60},
      {"green", 60, 160, 60},  {"olive", 120, 130, 50},  {"teal", 40, 140, 140},
      {"blue", 50, 80, 200},   {"navy", 30, 40, 100},    {"purple", 130, 60, 160},
      {"pink", 230, 150, 180}, {"brown", 120, 80, 50},   {"beige", 210, 195, 160},
      {"gray", 128, 128, 128}, {"white", 235, 235, 235}, {"black", 30, 30, 30}};
  const Named* best = &kNames[0];
  int best_d = 1 << 30;
  for (const auto& n : kNames) {
    const int d = (n.r - r) * (n.r - r) + (n.g - g) * (n.g - g) + (n.b - b) * (n.b - b);
    if (d < best_d) best_d = d, best = &n;
  }
  return best->name;
}

}  // namespace mmprof::gen
