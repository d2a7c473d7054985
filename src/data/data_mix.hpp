#pragma once
// The data mix: what the dataset holds, probed from headers (image dimensions, video container
// metadata), never decoded. Counts and bytes come from the whole index; per-sample statistics
// from every sample, or on a dataset larger than the limit from a seeded uniform random sample
// of `limit` samples (stated in the output).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/dataset.hpp"

namespace mmprof::env {

inline constexpr size_t kMixSampleLimit = 2000;

// Indices of the samples to probe: all of [0, n) when n <= limit, else `limit` distinct indices
// drawn uniformly without replacement (partial Fisher-Yates seeded by `seed`), ascending so the
// reads go through the files in order.
std::vector<size_t> choose_mix_samples(size_t n, size_t limit, uint64_t seed);

// What probing one sample found.
struct MixRecord {
  std::string key;
  Modality modality = Modality::image;
  bool ok = false;
  std::string error;
  int width = 0, height = 0;
  std::string format;  // image: "jpeg"/"png"/...; video: codec ("h264")
  std::string pix_fmt;
  double duration_s = 0, fps = 0;
  int64_t frames = 0;
  bool has_caption = false;
  uint64_t caption_bytes = 0, caption_words = 0;
};

// Words of a caption: runs of non-whitespace (ASCII whitespace separates).
uint64_t count_words(std::string_view text) noexcept;

// Pure: the per-sample statistics block from probed records.
nlohmann::json summarize_mix(const std::vector<MixRecord>& records);

// The data_mix block: {"counts", "bytes", "sampling", "images", "videos", "captions", "errors"}.
// Reads the chosen samples with pread (images: the first 256 KiB, the whole file only when the
// header lies beyond; videos: the whole member, since the MP4 index may sit at the end).
nlohmann::json data_mix(const Dataset& dataset, size_t limit = kMixSampleLimit, uint64_t seed = 0);

}  // namespace mmprof::env
