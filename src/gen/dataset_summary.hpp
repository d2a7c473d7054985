#pragma once
// dataset.json: what was generated, from per-sample records. Pure (no I/O), so the layout of the
// document is tested without encoding anything.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gen/generator.hpp"
#include "gen/sample_plan.hpp"
#include "gen/tar_writer.hpp"

namespace mmprof::gen {

struct SampleRecord {
  std::string key;
  SampleKind kind = SampleKind::jpeg;
  int width = 0, height = 0;
  uint64_t media_bytes = 0, caption_bytes = 0;
  int caption_words = 0;
  int jpeg_quality = 0;                              // JPEG only
  int fps = 0, frames = 0, keyframe_interval_s = 0;  // video only
};

struct LayoutsWritten {
  bool files = false;
  uint64_t files_bytes = 0;
  int files_count = 0;
  bool shards = false;
  std::vector<ShardInfo> shard_list;
};

// One shard of a shards listing (dataset.json's, shards.json's): name, bytes, samples, first and
// last key.
nlohmann::json shard_json(const ShardInfo& s);

// {count, min, mean, p50, p90, p99, max} of `values` (nearest-rank percentiles); count 0 -> nulls.
nlohmann::json describe(std::vector<double> values);

nlohmann::json dataset_json(const GenOptions& options, const std::vector<SampleRecord>& samples,
                            const LayoutsWritten& layouts);

}  // namespace mmprof::gen
