#include "run/stage_breakdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <numeric>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

void append(std::vector<double>& to, const std::vector<double>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// One group of a dimension: its label and the samples of every class it holds.
struct Group {
  std::string label, modality, format, resolution;
  std::vector<double> read_ms, decode_ms, augment_ms;
  uint64_t bytes = 0;
  double megapixels = 0;
};

SampleClassFigures entry(const Group& g, double total_decode_ms, bool with_class_fields) {
  std::vector<double> decode = g.decode_ms;
  std::sort(decode.begin(), decode.end());
  SampleClassFigures e;
  e.label = g.label;
  e.samples = static_cast<int64_t>(decode.size());
  e.bytes = g.bytes;
  e.read_ms_mean = mean(g.read_ms);
  e.decode_ms_mean = mean(decode);
  e.decode_ms_p50 = quantile_sorted(decode, 0.5);
  e.decode_ms_p90 = quantile_sorted(decode, 0.9);
  e.augment_ms_mean = mean(g.augment_ms);
  e.decode_ms_total = sum(decode);
  if (total_decode_ms > 0) e.decode_share = e.decode_ms_total / total_decode_ms;
  e.source_megapixels_mean = g.megapixels / static_cast<double>(decode.size());
  if (with_class_fields) {
    e.modality = g.modality;
    e.format = g.format;
    e.resolution = g.resolution;
  }
  return e;
}

}  // namespace

std::string resolution_bucket(int width, int height) {
  if (width <= 0 || height <= 0) return "unknown";
  const double mp = static_cast<double>(width) * height / 1e6;
  for (const double bound : kResolutionBucketsMp)
    if (mp <= bound) return fmt::format("<={:g} MP", bound);
  return fmt::format(">{:g} MP", kResolutionBucketsMp[std::size(kResolutionBucketsMp) - 1]);
}

std::string sample_class(const SampleInfo& s) {
  return fmt::format("{} {}s {}", s.format.empty() ? "unknown" : s.format,
                     modality_name(s.modality), resolution_bucket(s.source_width, s.source_height));
}

void StageBreakdown::add(const SampleInfo& s) {
  Samples& c = by_class_[sample_class(s)];
  if (c.read_ms.empty()) {
    c.modality = modality_name(s.modality);
    c.format = s.format.empty() ? "unknown" : s.format;
    c.resolution = resolution_bucket(s.source_width, s.source_height);
  }
  c.read_ms.push_back(s.read_ms);
  c.decode_ms.push_back(s.decode_ms);
  c.augment_ms.push_back(s.augment_ms);
  c.bytes += s.bytes;
  c.megapixels += static_cast<double>(s.source_width) * s.source_height / 1e6;
}

std::string StageBreakdown::slowest_class() const {
  std::string slowest;
  double worst = -1;
  for (const auto& [label, c] : by_class_) {
    if (const double m = mean(c.decode_ms); m > worst) {
      worst = m;
      slowest = label;
    }
  }
  return slowest;
}

std::optional<StageBreakdownFigures> StageBreakdown::figures(const std::string& phase) const {
  if (by_class_.empty()) return std::nullopt;
  StageBreakdownFigures out;
  out.phase = phase;
  for (const auto& [label, c] : by_class_) {
    out.decode_ms_total += sum(c.decode_ms);
    out.samples += static_cast<int64_t>(c.decode_ms.size());
  }
  // Each dimension merges the classes that share its label (a format's classes of every size).
  const auto dimension = [&](auto label_of, bool with_class_fields) {
    std::map<std::string, Group> groups;
    for (const auto& [label, c] : by_class_) {
      Group& g = groups[label_of(label, c)];
      g.label = label_of(label, c);
      g.modality = c.modality;
      g.format = c.format;
      g.resolution = c.resolution;
      append(g.read_ms, c.read_ms);
      append(g.decode_ms, c.decode_ms);
      append(g.augment_ms, c.augment_ms);
      g.bytes += c.bytes;
      g.megapixels += c.megapixels;
    }
    std::vector<SampleClassFigures> entries;
    entries.reserve(groups.size());
    for (const auto& [label, g] : groups)
      entries.push_back(entry(g, out.decode_ms_total, with_class_fields));
    std::stable_sort(entries.begin(), entries.end(),
                     [](const SampleClassFigures& a, const SampleClassFigures& b) {
                       return a.decode_ms_mean > b.decode_ms_mean;
                     });
    return entries;
  };
  out.by_class = dimension([](const std::string& label, const Samples&) { return label; }, true);
  out.resolution_buckets_megapixels.assign(std::begin(kResolutionBucketsMp),
                                           std::end(kResolutionBucketsMp));
  out.by_modality =
      dimension([](const std::string&, const Samples& c) { return c.modality; }, false);
  out.by_format = dimension([](const std::string&, const Samples& c) { return c.format; }, false);
  out.by_resolution =
      dimension([](const std::string&, const Samples& c) { return c.resolution; }, false);

  // The slowest class by mean decode per sample, against the mean of every other sample; and the
  // class that takes the largest share of all decode time.
  out.slowest = out.by_class.front();
  const double rest_n = static_cast<double>(out.samples - out.slowest.samples);
  const double rest_total = out.decode_ms_total - out.slowest.decode_ms_total;
  if (rest_n > 0) out.rest_decode_ms_mean = rest_total / rest_n;
  if (rest_n > 0 && rest_total > 0)
    out.times_rest = out.slowest.decode_ms_mean / (rest_total / rest_n);
  out.largest_share =
      *std::max_element(out.by_class.begin(), out.by_class.end(),
                        [](const SampleClassFigures& a, const SampleClassFigures& b) {
                          return a.decode_ms_total < b.decode_ms_total;
                        });
  return out;
}

}  // namespace mmprof
