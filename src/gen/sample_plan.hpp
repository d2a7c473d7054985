#pragma once
// What each sample of a generated dataset is, decided before any pixel is made: its key, kind and
// parameters. Pure functions of (options, index), so every worker count yields the same dataset.
#include <cstdint>
#include <string>
#include <vector>

#include "gen/generator.hpp"
#include "util/rng.hpp"

namespace mmprof::gen {

enum class SampleKind : uint8_t { jpeg, png, mp4 };

const char* extension(SampleKind kind) noexcept;

struct ImageParams {
  int width = 0, height = 0;
  int jpeg_quality = 90;  // unused for PNG
};

struct VideoParams {
  int width = 0, height = 0;
  int fps = 30;
  int frames = 0;
  int keyframe_interval_s = 2;  // gop = fps * this
  double duration_s() const { return static_cast<double>(frames) / fps; }
};

// The kind of every sample in key order: exactly `videos` videos and round(png_fraction * images)
// PNGs, placed by a seeded shuffle so a sequential read sees a mix.
std::vector<SampleKind> plan_kinds(const GenOptions& options);

// Keys are zero-padded indices, at least 6 digits, wide enough for `total`.
std::string sample_key(int index, int total);

// Long-tailed sizes: most near the small end like web photos, a tail up to the maximum.
ImageParams draw_image_params(const GenOptions& options, Rng& rng);
// Heights from {360, 480, 720, 1080} capped by video_max_height; 16:9 widths rounded to even.
VideoParams draw_video_params(const GenOptions& options, Rng& rng);

// Throws UsageError for options that cannot describe a dataset (negative counts, bad bounds).
void validate(const GenOptions& options);

}  // namespace mmprof::gen
