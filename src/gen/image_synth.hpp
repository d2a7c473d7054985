#pragma once
// Photo-like RGB content without a photo: a smooth two-colour gradient, multi-octave value noise
// (texture at 2-256 px scales), a few soft-edged shapes and fine sensor noise. The point is
// realistic JPEG entropy and decoder work, not beauty: flat test patterns compress 10-50x better
// than photos and would make every decode benchmark optimistic.
#include <cstdint>
#include <string>
#include <vector>

#include "util/rng.hpp"

namespace mmprof::gen {

// An int as a byte, saturating at 0 and 255.
inline uint8_t clamp8(int v) {
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // RGB24, rows packed (stride = 3 * width)
};

// Per-thread buffers, reused across images: fresh multi-megabyte allocations cost a page fault
// per 4 KiB on the machines we target.
struct ImageSynthScratch {
  std::vector<int32_t> field;    // reduced-resolution texture accumulator
  std::vector<int16_t> lattice;  // one octave's random lattice
  std::vector<uint8_t> low_rgb;  // reduced-resolution colour image
  std::vector<int32_t> row;      // one vertically interpolated reduced-resolution row
};

// What the picture shows, in words, for its caption.
struct ImageLook {
  std::string main_color, accent_color;
  int shapes = 0;
  bool textured = false;  // strong fine texture (foliage, gravel) rather than smooth
};

// Fills `out` (resized to width x height, capacity reused) from `rng`; deterministic.
ImageLook synthesize_image(Rng& rng, int width, int height, ImageSynthScratch& scratch,
                           RgbImage& out);

// Adds zero-mean noise of roughly `sigma` grey levels to `n` bytes at `data`, clamped to 0..255;
// `phase` picks where in the shared noise table to start. Cheap: one table read per byte.
void add_sensor_noise(uint8_t* data, size_t n, double sigma, uint64_t phase);

// Common colour names for captions: the nearest of a small palette to an RGB triple.
const char* color_name(int r, int g, int b);

}  // namespace mmprof::gen
