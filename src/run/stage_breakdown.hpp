#pragma once
// Per-sample stage latency broken down by sample class: modality, format (the image format of the
// media-format table, or the video codec) and source-resolution bucket, and the slowest class.
// summary.json's `stage_breakdown` (docs/metrics.md). Pure: the phase feeds it the delivered
// samples, figures() describes them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/loader.hpp"
#include "mmprof/summary_loading.hpp"

namespace mmprof {

// Upper bounds (megapixels, inclusive) of the source-resolution buckets; above the last: ">8 MP".
inline constexpr double kResolutionBucketsMp[] = {0.5, 2, 8};

// "<=0.5 MP", "<=2 MP", "<=8 MP", ">8 MP"; "unknown" without a size.
std::string resolution_bucket(int width, int height);

// A sample's class: "webp images >8 MP", "h264 videos <=2 MP" (format, modality, bucket).
std::string sample_class(const SampleInfo& s);

class StageBreakdown {
 public:
  void add(const SampleInfo& s);

  // The samples added, by class and by each of its dimensions; empty when none was added.
  std::optional<StageBreakdownFigures> figures(const std::string& phase) const;

  // The class with the largest mean decode time per sample; "" when none.
  std::string slowest_class() const;

 private:
  struct Samples {
    std::string modality, format, resolution;
    std::vector<double> read_ms, decode_ms, augment_ms;
    uint64_t bytes = 0;
    double megapixels = 0;  // summed
  };
  std::map<std::string, Samples> by_class_;
};

}  // namespace mmprof
