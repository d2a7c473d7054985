#include "gen/sample_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.hpp"

namespace mmprof::gen {
namespace {

// Index of the rng that places kinds; per-sample rngs use indices 0..total-1.
constexpr uint64_t kPlanIndex = ~0ULL;

int round_even(double v) {
  return std::max(2, 2 * static_cast<int>(std::lround(v / 2.0)));
}

}  // namespace

const char* extension(SampleKind kind) noexcept {
  switch (kind) {
    case SampleKind::jpeg:
      return "jpg";
    case SampleKind::png:
      return "png";
    case SampleKind::mp4:
      return "mp4";
  }
  return "bin";
}

std::vector<SampleKind> plan_kinds(const GenOptions& options) {
  const int pngs = static_cast<int>(std::lround(options.png_fraction * options.images));
  std::vector<SampleKind> kinds;
  kinds.reserve(static_cast<size_t>(options.images) + static_cast<size_t>(options.videos));
  kinds.insert(kinds.end(), static_cast<size_t>(options.images - pngs), SampleKind::jpeg);
  kinds.insert(kinds.end(), static_cast<size_t>(pngs), SampleKind::png);
  kinds.insert(kinds.end(), static_cast<size_t>(options.videos), SampleKind::mp4);
  // Fisher-Yates with our own rng: std::shuffle's algorithm is implementation-defined.
  Rng rng = Rng::for_item(options.seed, kStreamGenerate, kPlanIndex);
  for (size_t i = kinds.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1));
    std::swap(kinds[i - 1], kinds[j]);
  }
  return kinds;
}

std::string sample_key(int index, int total) {
  const size_t width = std::max<size_t>(6, std::to_string(std::max(total - 1, 0)).size());
  std::string digits = std::to_string(index);
  return std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
}

ImageParams draw_image_params(const GenOptions& o, Rng& rng) {
  // t = u^3 puts ~70% of images in the lower third of the size range (web photos are mostly
  // small, with a tail of camera-sized ones); the aspect jitter avoids one fixed ratio.
  const double t = std::pow(rng.uniform(), 3.0);
  const double aspect_jitter = rng.uniform(0.8, 1.25);
  ImageParams p;
  p.width = static_cast<int>(std::lround(o.image_min_w + t * (o.image_max_w - o.image_min_w)));
  const double h = (o.image_min_h + t * (o.image_max_h - o.image_min_h)) * aspect_jitter;
  p.height = std::clamp(static_cast<int>(std::lround(h)), o.image_min_h, o.image_max_h);
  p.jpeg_quality = static_cast<int>(rng.range(85, 92));
  return p;
}

VideoParams draw_video_params(const GenOptions& o, Rng& rng) {
  static constexpr int kHeights[] = {360, 480, 720, 1080};
  std::vector<int> allowed;
  for (int h : kHeights)
    if (h <= o.video_max_height) allowed.push_back(h);
  if (allowed.empty()) allowed.push_back(round_even(o.video_max_height));
  VideoParams p;
  p.height = allowed[static_cast<size_t>(rng.range(0, static_cast<int64_t>(allowed.size()) - 1))];
  p.width = round_even(p.height * 16.0 / 9.0);
  p.fps = rng.uniform() < 0.5 ? 24 : 30;
  p.keyframe_interval_s = static_cast<int>(rng.range(2, 4));
  const double duration = rng.uniform(o.video_min_s, o.video_max_s);
  p.frames = std::max(1, static_cast<int>(std::lround(duration * p.fps)));
  return p;
}

void validate(const GenOptions& o) {
  auto fail = [](const std::string& what) { throw UsageError("gen: " + what); };
  if (o.out.empty()) fail("an output directory is required");
  if (o.images < 0 || o.videos < 0) fail("image and video counts must be >= 0");
  if (o.images + o.videos <= 0) fail("the dataset needs at least one image or video");
  if (!(o.png_fraction >= 0.0 && o.png_fraction <= 1.0)) fail("png_fraction must be in [0, 1]");
  if (o.image_min_w < 16 || o.image_min_h < 16 || o.image_max_w < o.image_min_w ||
      o.image_max_h < o.image_min_h || o.image_max_w > 16384 || o.image_max_h > 16384)
    fail("image size bounds must satisfy 16 <= min <= max <= 16384");
  if (!(o.video_min_s > 0.0 && o.video_max_s >= o.video_min_s && o.video_max_s <= 3600.0))
    fail("video durations must satisfy 0 < min <= max <= 3600 s");
  if (o.video_max_height < 64 || o.video_max_height > 4320)
    fail("video_max_height must be in [64, 4320]");
  if (!o.write_files && !o.write_shards) fail("nothing to write: enable files or shards");
  if (o.shard_bytes == 0) fail("shard_bytes must be > 0");
}

}  // namespace mmprof::gen
