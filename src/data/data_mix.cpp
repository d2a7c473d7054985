#include "data/data_mix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "data/range_reader.hpp"
#include "decode/image_decoder.hpp"
#include "decode/video_decoder.hpp"
#include "mmprof/error.hpp"
#include "stats/descriptive.hpp"
#include "util/interrupt.hpp"
#include "util/rng.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

constexpr uint64_t kImagePrefixBytes = 256 << 10;
// The image-size histogram of dataset.json (mmprof gen), so the two can be compared.
constexpr double kMegapixelBins[] = {0.1, 0.25, 0.5, 1.0, 2.0};

json spread(std::vector<double> v) {
  if (v.empty()) {
    return {{"count", 0},     {"min", nullptr}, {"p50", nullptr},
            {"p90", nullptr}, {"max", nullptr}, {"mean", nullptr}};
  }
  std::sort(v.begin(), v.end());
  return {{"count", v.size()},
          {"min", v.front()},
          {"p50", quantile_sorted(v, 0.5)},
          {"p90", quantile_sorted(v, 0.9)},
          {"max", v.back()},
          {"mean", mean(v)}};
}

std::string resolution(int w, int h) {
  std::string s = std::to_string(w);
  s.push_back('x');
  s.append(std::to_string(h));
  return s;
}

std::string fps_label(double fps) {
  // 30000/1001 -> "29.97"; whole rates without decimals.
  const double r = std::round(fps * 100) / 100;
  char buf[32];
  std::snprintf(buf, sizeof buf, r == std::floor(r) ? "%.0f" : "%.2f", r);
  return buf;
}

json image_block(const std::vector<MixRecord>& rs) {
  std::vector<double> w, h, mp;
  std::map<std::string, int64_t> formats, resolutions;
  std::vector<int64_t> bins(std::size(kMegapixelBins) + 1, 0);
  for (const auto& r : rs) {
    if (r.modality != Modality::image || !r.ok) continue;
    const double m = double(r.width) * r.height / 1e6;
    w.push_back(r.width), h.push_back(r.height), mp.push_back(m);
    ++formats[r.format];
    ++resolutions[resolution(r.width, r.height)];
    bins[size_t(std::upper_bound(std::begin(kMegapixelBins), std::end(kMegapixelBins), m) -
                std::begin(kMegapixelBins))]++;
  }
  json histogram = json::array();
  for (size_t i = 0; i < bins.size(); ++i) {
    histogram.push_back(
        {{"min_megapixels", i == 0 ? 0.0 : kMegapixelBins[i - 1]},
         {"max_megapixels", i < std::size(kMegapixelBins) ? json(kMegapixelBins[i]) : json()},
         {"count", bins[i]}});
  }
  return {{"probed", w.size()},        {"formats", formats},
          {"width", spread(w)},        {"height", spread(h)},
          {"megapixels", spread(mp)},  {"megapixels_histogram", histogram},
          {"resolutions", resolutions}};
}

json video_block(const std::vector<MixRecord>& rs) {
  std::vector<double> duration, frames, fps;
  std::map<std::string, int64_t> codecs, pix_fmts, resolutions, rates;
  for (const auto& r : rs) {
    if (r.modality != Modality::video || !r.ok) continue;
    duration.push_back(r.duration_s);
    frames.push_back(static_cast<double>(r.frames));
    fps.push_back(r.fps);
    ++codecs[r.format];
    ++pix_fmts[r.pix_fmt];
    ++resolutions[resolution(r.width, r.height)];
    ++rates[fps_label(r.fps)];
  }
  return {{"probed", duration.size()}, {"duration_s", spread(duration)},
          {"frames", spread(frames)},  {"fps", spread(fps)},
          {"fps_counts", rates},       {"resolutions", resolutions},
          {"codecs", codecs},          {"pix_fmts", pix_fmts}};
}

class Prober {
 public:
  explicit Prober(const Dataset& d) : reader_(d) { reader_.stop_on_interrupt(); }
  // Why probing cannot go on (a server gone, the open-files limit), or empty.
  const std::string& stopped() const noexcept { return stopped_; }

  // The ranges the next probes read, in order: a remote dataset's requests then overlap (a probe
  // of 2000 samples one round trip at a time would add seconds to every run over a network).
  void announce(const std::vector<const SampleEntry*>& next) {
    ranges_.clear();
    for (const SampleEntry* s : next) {
      ranges_.push_back(s->modality == Modality::image
                            ? ByteRange{s->media.file, s->media.offset,
                                        std::min(s->media.size, kImagePrefixBytes)}
                            : s->media);
      if (s->has_caption) ranges_.push_back(s->caption);
    }
    reader_.begin(ranges_);
  }

  MixRecord probe(const SampleEntry& s) {
    MixRecord r;
    r.key = s.key;
    r.modality = s.modality;
    try {
      if (s.modality == Modality::image) {
        probe_image(s, r);
      } else {
        probe_video(s, r);
      }
      r.ok = true;
    } catch (const ReadFailure& f) {
      r.error = f.message;
      if (f.machine) stopped_ = f.message;
    } catch (const Error& e) {
      if (e.code() == ExitCode::interrupted) throw;  // Ctrl-C during the read: the probe stops
      r.error = e.what();
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    if (s.has_caption) caption(s, r);
    return r;
  }

 private:
  void probe_image(const SampleEntry& s, MixRecord& r) {
    reader_.read({s.media.file, s.media.offset, std::min(s.media.size, kImagePrefixBytes)}, bytes_);
    ImageInfo info;
    try {
      info = images_.probe(bytes_);
    } catch (const std::exception&) {
      if (s.media.size <= kImagePrefixBytes) throw;
      reader_.read(s.media, bytes_);  // header beyond the prefix
      info = images_.probe(bytes_);
    }
    r.width = info.width, r.height = info.height, r.format = info.format;
  }

  void probe_video(const SampleEntry& s, MixRecord& r) {
    reader_.read(s.media, bytes_);
    const VideoInfo info = videos_.open(bytes_);
    videos_.close();
    r.width = info.width, r.height = info.height, r.format = info.codec;
    r.pix_fmt = info.pix_fmt, r.duration_s = info.duration_s, r.fps = info.fps;
    r.frames = info.frames;
  }

  void caption(const SampleEntry& s, MixRecord& r) {
    try {
      reader_.read(s.caption, bytes_);
    } catch (const ReadFailure&) {
      return;  // the sample's own record says what is wrong with its files
    }
    r.has_caption = true;
    r.caption_bytes = bytes_.size();
    r.caption_words =
        count_words(std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()));
  }

  RangeReader reader_;
  std::vector<ByteRange> ranges_;
  std::vector<uint8_t> bytes_;
  std::string stopped_;
  ImageDecoder images_;
  VideoDecoder videos_;
};

}  // namespace

std::vector<size_t> choose_mix_samples(size_t n, size_t limit, uint64_t seed) {
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), size_t{0});
  if (n <= limit) return all;
  Rng rng(seed);
  for (size_t i = 0; i < limit; ++i) {
    const size_t j = i + static_cast<size_t>(rng.next() % (n - i));
    std::swap(all[i], all[j]);
  }
  all.resize(limit);
  std::sort(all.begin(), all.end());
  return all;
}

uint64_t count_words(std::string_view text) noexcept {
  uint64_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

json summarize_mix(const std::vector<MixRecord>& records) {
  std::vector<double> cap_bytes, cap_words;
  json errors = json::array();
  int64_t error_count = 0;
  for (const auto& r : records) {
    if (r.has_caption) {
      cap_bytes.push_back(static_cast<double>(r.caption_bytes));
      cap_words.push_back(static_cast<double>(r.caption_words));
    }
    if (!r.ok && error_count++ < 10) errors.push_back({{"key", r.key}, {"message", r.error}});
  }
  return {
      {"images", image_block(records)},
      {"videos", video_block(records)},
      {"captions",
       {{"probed", cap_bytes.size()}, {"bytes", spread(cap_bytes)}, {"words", spread(cap_words)}}},
      {"errors", {{"count", error_count}, {"first", errors}}}};
}

json data_mix(const Dataset& dataset, size_t limit, uint64_t seed) {
  int64_t images = 0, videos = 0, captions = 0;
  uint64_t image_bytes = 0, video_bytes = 0, caption_bytes = 0;
  for (const auto& s : dataset.samples()) {
    (s.modality == Modality::video ? videos : images)++;
    (s.modality == Modality::video ? video_bytes : image_bytes) += s.media.size;
    if (s.has_caption) ++captions, caption_bytes += s.caption.size;
  }
  const auto chosen = choose_mix_samples(dataset.size(), limit, seed);
  std::vector<MixRecord> records;
  records.reserve(chosen.size());
  Prober prober(dataset);
  std::optional<size_t> interrupted_after;
  constexpr size_t kAhead = 32;
  std::vector<const SampleEntry*> next;
  for (size_t k = 0; k < chosen.size(); ++k) {
    if (k % kAhead == 0) {
      next.clear();
      for (size_t j = k; j < std::min(k + kAhead, chosen.size()); ++j)
        next.push_back(&dataset.samples()[chosen[j]]);
      prober.announce(next);
    }
    // Ctrl-C stops the probe between samples and during a sample's read (the end-of-run probe of
    // 2,000 samples from a slow server took 182 s to notice it): what was probed is kept, and the
    // block says it stopped.
    try {
      throw_if_interrupted();
      records.push_back(prober.probe(dataset.samples()[chosen[k]]));
    } catch (const Error& e) {
      if (e.code() != ExitCode::interrupted) throw;
      interrupted_after = records.size();
      break;
    }
    if (!prober.stopped().empty()) break;  // every later read would fail the same way
  }
  json out = summarize_mix(records);
  out["path"] = dataset.root().string();
  out["layout"] = dataset.layout_info().name;
  out["counts"] = {
      {"samples", dataset.size()}, {"images", images}, {"videos", videos}, {"captions", captions}};
  out["bytes"] = {{"images", image_bytes},
                  {"videos", video_bytes},
                  {"captions", caption_bytes},
                  {"total", image_bytes + video_bytes + caption_bytes},
                  {"source", "dataset index (file sizes / tar member sizes), every sample"}};
  const bool all = chosen.size() == dataset.size();
  out["sampling"] = {
      {"method", all ? "all samples" : "uniform random sample without replacement"},
      {"seed", all ? json() : json(seed)},
      {"probed", records.size()},
      {"of", dataset.size()},
      {"limit", limit},
      {"probe",
       "headers: JPEG via libjpeg-turbo's header read, PNG via IHDR, video via "
       "libavformat container metadata; other image formats (rare) take one decode"}};
  if (!prober.stopped().empty()) out["sampling"]["stopped"] = prober.stopped();
  if (interrupted_after) {
    out["sampling"]["stopped"] =
        fmt::format("interrupted (Ctrl-C) after {} of {} samples: the mix is of those",
                    *interrupted_after, chosen.size());
  }
  return out;
}

}  // namespace mmprof::env
