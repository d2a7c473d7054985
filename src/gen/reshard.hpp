#pragma once
// `mmprof shard`: a dataset (a folder of files, or tar shards to re-shard) written as
// deterministic WebDataset-style tar shards of about --shard-mb each, balanced so that ranks and
// workers get equal work, with index.csv (where each sample's bytes are) and shards.json.
// Written into a temporary folder beside --out and renamed into place at the end: an interrupted
// run leaves no half dataset where a loader would find it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "mmprof/dataset.hpp"

namespace mmprof::gen {

enum class ShardBalance { bytes, count };

// Which shard each sample goes to (in order): n = max(1, round(total / shard_bytes)) shards. By
// bytes, sample i goes to shard floor(n x (bytes before i + half of its own) / total), so every
// shard holds total / n bytes give or take one sample; by count, floor(n x i / samples).
std::vector<size_t> plan_shards(const std::vector<uint64_t>& sample_bytes, uint64_t shard_bytes,
                                ShardBalance balance);

struct ReshardOptions {
  std::filesystem::path out;
  uint64_t shard_bytes = 64'000'000;
  ShardBalance balance = ShardBalance::bytes;
  bool force = false;  // replace an --out that exists
  std::function<void(size_t done, size_t total)> progress;
};

// Writes the shards; returns shards.json's content. Throws UsageError when --out exists without
// force, InputError naming a sample that cannot be read, OutputError when writing fails.
nlohmann::json reshard(const Dataset& source, const ReshardOptions& options);

}  // namespace mmprof::gen
