#include "gen/dataset_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "gen/video_encode.hpp"
#include "util/version.hpp"

namespace mmprof::gen {
namespace {

using nlohmann::json;

json generator_params(const GenOptions& o) {
  // threads is left out on purpose: the output does not depend on it.
  return {{"seed", o.seed},
          {"images", o.images},
          {"videos", o.videos},
          {"png_fraction", o.png_fraction},
          {"image_min_size", {o.image_min_w, o.image_min_h}},
          {"image_max_size", {o.image_max_w, o.image_max_h}},
          {"video_min_s", o.video_min_s},
          {"video_max_s", o.video_max_s},
          {"video_max_height", o.video_max_height},
          {"video_codec", codec_description(o.video_codec)},
          {"shard_bytes", o.shard_bytes}};
}

json image_summary(const std::vector<SampleRecord>& samples) {
  std::vector<double> w, h, mp, bpp;
  static constexpr double kBins[] = {0.1, 0.25, 0.5, 1.0, 2.0};
  std::vector<int> counts(std::size(kBins) + 1, 0);
  for (const auto& s : samples) {
    if (s.kind == SampleKind::mp4) continue;
    const double pixels = double(s.width) * s.height;
    w.push_back(s.width), h.push_back(s.height), mp.push_back(pixels / 1e6);
    if (s.kind == SampleKind::jpeg) bpp.push_back(double(s.media_bytes) / pixels);
    counts[size_t(std::upper_bound(std::begin(kBins), std::end(kBins), pixels / 1e6) -
                  std::begin(kBins))]++;
  }
  json histogram = json::array();
  for (size_t i = 0; i < counts.size(); ++i) {
    histogram.push_back({{"min_megapixels", i == 0 ? 0.0 : kBins[i - 1]},
                         {"max_megapixels", i < std::size(kBins) ? json(kBins[i]) : json()},
                         {"count", counts[i]}});
  }
  return {{"width", describe(w)},
          {"height", describe(h)},
          {"megapixels", describe(mp)},
          {"megapixels_histogram", histogram},
          {"jpeg_bytes_per_pixel", describe(bpp)}};
}

json video_summary(const std::vector<SampleRecord>& samples, VideoCodec codec) {
  std::vector<double> duration, bitrate;
  std::map<std::string, int> resolutions, fps, keyint;
  int64_t frames = 0;
  for (const auto& s : samples) {
    if (s.kind != SampleKind::mp4) continue;
    const double d = double(s.frames) / s.fps;
    duration.push_back(d);
    bitrate.push_back(double(s.media_bytes) * 8.0 / d / 1e6);
    resolutions[std::to_string(s.width) + "x" + std::to_string(s.height)]++;
    fps[std::to_string(s.fps)]++;
    keyint[std::to_string(s.keyframe_interval_s)]++;
    frames += s.frames;
  }
  return {{"codec", codec_name(codec)},
          {"pix_fmt", "yuv420p"},
          {"container", "mp4"},
          {"duration_s", describe(duration)},
          {"bitrate_mbps", describe(bitrate)},
          {"resolutions", resolutions},
          {"fps", fps},
          {"keyframe_interval_s", keyint},
          {"frames", frames}};
}

json layouts_json(const LayoutsWritten& l) {
  json out = json::object();
  if (l.files)
    out["files"] = {{"dir", "files"}, {"files", l.files_count}, {"bytes", l.files_bytes}};
  if (l.shards) {
    json list = json::array();
    uint64_t bytes = 0;
    for (const auto& s : l.shard_list) {
      list.push_back(shard_json(s));
      bytes += s.bytes;
    }
    out["shards"] = {
        {"dir", "shards"}, {"count", l.shard_list.size()}, {"bytes", bytes}, {"shards", list}};
  }
  return out;
}

}  // namespace

json shard_json(const ShardInfo& s) {
  return {{"name", s.name},
          {"bytes", s.bytes},
          {"samples", s.samples},
          {"first_key", s.first_key},
          {"last_key", s.last_key}};
}

json describe(std::vector<double> v) {
  if (v.empty()) {
    return {{"count", 0},     {"min", nullptr}, {"mean", nullptr}, {"p50", nullptr},
            {"p90", nullptr}, {"p99", nullptr}, {"max", nullptr}};
  }
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    const auto i = static_cast<size_t>(std::ceil(q * double(v.size())));
    return v[std::clamp<size_t>(i, 1, v.size()) - 1];
  };
  return {{"count", v.size()},
          {"min", v.front()},
          {"mean", std::accumulate(v.begin(), v.end(), 0.0) / double(v.size())},
          {"p50", rank(0.5)},
          {"p90", rank(0.9)},
          {"p99", rank(0.99)},
          {"max", v.back()}};
}

json dataset_json(const GenOptions& o, const std::vector<SampleRecord>& samples,
                  const LayoutsWritten& layouts) {
  std::map<std::string, int> images{{"jpg", 0}, {"png", 0}}, videos{{"mp4", 0}};
  uint64_t image_bytes = 0, video_bytes = 0, text_bytes = 0;
  std::vector<double> words;
  for (const auto& s : samples) {
    const bool video = s.kind == SampleKind::mp4;
    (video ? videos : images)[extension(s.kind)]++;
    (video ? video_bytes : image_bytes) += s.media_bytes;
    text_bytes += s.caption_bytes;
    words.push_back(s.caption_words);
  }
  return {
      {"schema", "mmprof.dataset/1"},
      {"mmprof_version", mmprof::version()},
      {"generator", generator_params(o)},
      {"samples", samples.size()},
      {"keys", samples.empty() ? json() : json::array({samples.front().key, samples.back().key})},
      {"counts", {{"image", images}, {"video", videos}, {"text", samples.size()}}},
      {"bytes",
       {{"total", image_bytes + video_bytes + text_bytes},
        {"image", image_bytes},
        {"video", video_bytes},
        {"text", text_bytes}}},
      {"images", image_summary(samples)},
      {"videos", video_summary(samples, o.video_codec)},
      {"captions", {{"words", describe(words)}}},
      {"layouts", layouts_json(layouts)}};
}

}  // namespace mmprof::gen
