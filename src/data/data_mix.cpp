#include "data/data_mix.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "data/open_files.hpp"
#include "decode/image_decoder.hpp"
#include "decode/video_decoder.hpp"
#include "stats/descriptive.hpp"
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

// Reads [offset, offset+size) of an open file; short only at EOF.
std::vector<uint8_t> pread_range(int fd, uint64_t offset, uint64_t size) {
  std::vector<uint8_t> buf(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, buf.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  buf.resize(done);
  return buf;
}

// The dataset's files, opened on demand with a bounded number held (OpenFiles).
class FileCache {
 public:
  explicit FileCache(const Dataset& d) : dataset_(d), files_(OpenFiles::capacity_for(1)) {}
  int fd(uint32_t file) { return files_.get(file, dataset_.root() / dataset_.files()[file]); }

 private:
  const Dataset& dataset_;
  OpenFiles files_;
};

class Prober {
 public:
  explicit Prober(const Dataset& d) : files_(d) {}

  MixRecord probe(const SampleEntry& s) {
    MixRecord r;
    r.key = s.key;
    r.modality = s.modality;
    try {
      const int fd = files_.fd(s.media.file);
      if (fd < 0) throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
      if (s.modality == Modality::image) {
        probe_image(fd, s, r);
      } else {
        probe_video(fd, s, r);
      }
      r.ok = true;
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    if (s.has_caption) caption(s, r);
    return r;
  }

 private:
  void probe_image(int fd, const SampleEntry& s, MixRecord& r) {
    auto bytes = pread_range(fd, s.media.offset, std::min(s.media.size, kImagePrefixBytes));
    ImageInfo info;
    try {
      info = images_.probe(bytes);
    } catch (const std::exception&) {
      if (s.media.size <= kImagePrefixBytes) throw;
      bytes = pread_range(fd, s.media.offset, s.media.size);  // header beyond the prefix
      info = images_.probe(bytes);
    }
    r.width = info.width, r.height = info.height, r.format = info.format;
  }

  void probe_video(int fd, const SampleEntry& s, MixRecord& r) {
    const auto bytes = pread_range(fd, s.media.offset, s.media.size);
    const VideoInfo info = videos_.open(bytes);
    videos_.close();
    r.width = info.width, r.height = info.height, r.format = info.codec;
    r.pix_fmt = info.pix_fmt, r.duration_s = info.duration_s, r.fps = info.fps;
    r.frames = info.frames;
  }

  void caption(const SampleEntry& s, MixRecord& r) {
    const int fd = files_.fd(s.caption.file);
    if (fd < 0) return;
    const auto bytes = pread_range(fd, s.caption.offset, s.caption.size);
    r.has_caption = true;
    r.caption_bytes = bytes.size();
    r.caption_words =
        count_words(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  FileCache files_;
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
  for (const size_t i : chosen)
    records.push_back(prober.probe(dataset.samples()[i]));
  json out = summarize_mix(records);
  out["path"] = dataset.root().string();
  out["layout"] = dataset.layout() == Layout::tar ? "tar" : "files";
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
      {"probed", chosen.size()},
      {"of", dataset.size()},
      {"limit", limit},
      {"probe",
       "headers: JPEG via libjpeg-turbo's header read, PNG via IHDR, video via "
       "libavformat container metadata; other image formats (rare) take one decode"}};
  return out;
}

}  // namespace mmprof::env
