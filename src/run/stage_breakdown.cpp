#include "run/stage_breakdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <numeric>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

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

json entry(const Group& g, double total_decode_ms, bool with_class_fields) {
  std::vector<double> decode = g.decode_ms;
  std::sort(decode.begin(), decode.end());
  const double n = static_cast<double>(decode.size());
  json e = {{"class", g.label},
            {"samples", decode.size()},
            {"bytes", g.bytes},
            {"read_ms_mean", mean(g.read_ms)},
            {"decode_ms_mean", mean(decode)},
            {"decode_ms_p50", quantile_sorted(decode, 0.5)},
            {"decode_ms_p90", quantile_sorted(decode, 0.9)},
            {"augment_ms_mean", mean(g.augment_ms)},
            {"decode_ms_total", sum(decode)},
            {"decode_share", total_decode_ms > 0 ? json(sum(decode) / total_decode_ms) : json()},
            {"source_megapixels_mean", g.megapixels / n}};
  if (with_class_fields) {
    e["modality"] = g.modality;
    e["format"] = g.format;
    e["resolution"] = g.resolution;
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

json StageBreakdown::to_json(const std::string& phase) const {
  if (by_class_.empty()) return nullptr;
  double total_decode = 0;
  size_t samples = 0;
  for (const auto& [label, c] : by_class_) {
    total_decode += sum(c.decode_ms);
    samples += c.decode_ms.size();
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
    json out = json::array();
    for (const auto& [label, g] : groups)
      out.push_back(entry(g, total_decode, with_class_fields));
    std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a["decode_ms_mean"].get<double>() > b["decode_ms_mean"].get<double>();
    });
    return out;
  };
  json by_class = dimension([](const std::string& label, const Samples&) { return label; }, true);
  json buckets = json::array();
  for (const double b : kResolutionBucketsMp)
    buckets.push_back(b);
  json j = {{"phase", phase},
            {"samples", samples},
            {"decode_ms_total", total_decode},
            {"resolution_buckets_megapixels", buckets},
            {"by_modality",
             dimension([](const std::string&, const Samples& c) { return c.modality; }, false)},
            {"by_format",
             dimension([](const std::string&, const Samples& c) { return c.format; }, false)},
            {"by_resolution",
             dimension([](const std::string&, const Samples& c) { return c.resolution; }, false)},
            {"by_class", by_class}};

  // The slowest class by mean decode per sample, against the mean of every other sample; and the
  // class that takes the largest share of all decode time.
  json slowest = by_class.front();
  const double rest_n = static_cast<double>(samples) - slowest["samples"].get<double>();
  const double rest_total = total_decode - slowest["decode_ms_total"].get<double>();
  slowest["rest_decode_ms_mean"] = rest_n > 0 ? json(rest_total / rest_n) : json();
  slowest["times_rest"] =
      rest_n > 0 && rest_total > 0
          ? json(slowest["decode_ms_mean"].get<double>() / (rest_total / rest_n))
          : json();
  const auto largest =
      std::max_element(by_class.begin(), by_class.end(), [](const json& a, const json& b) {
        return a["decode_ms_total"].get<double>() < b["decode_ms_total"].get<double>();
      });
  j["slowest"] = {{"by_mean_decode", slowest}, {"by_decode_share", *largest}};
  return j;
}

}  // namespace mmprof
