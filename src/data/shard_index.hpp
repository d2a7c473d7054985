#pragma once
// index.csv of `mmprof shard` (beside its shards; shards.json names it): where each sample's
// bytes are in its shard, so that a dataset of shards is opened without scanning them (a remote
// one without listing them). This file is the one owner of its columns: the writer
// (gen/reshard.cpp) and the reader (data/dataset_store.cpp) both go through it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/tar_index.hpp"

namespace mmprof {

inline constexpr const char* kShardIndexFile = "index.csv";

struct ShardIndexRow {
  std::string key, shard, media_ext;
  uint64_t media_offset = 0, media_bytes = 0;
  std::optional<uint64_t> caption_offset, caption_bytes;  // both or neither
  bool operator==(const ShardIndexRow&) const = default;
};

// The file's text: the header, then one row per sample (a key holding a comma, a quote or a line
// break quoted, RFC 4180).
std::string shard_index_csv(const std::vector<ShardIndexRow>& rows);

// The rows of `text`, read from `where` (which errors name). Throws InputError for a column that
// is missing (an older mmprof shard wrote the file), a row shorter than the header, or a byte
// count that is not one (digits only: no sign, no space).
std::vector<ShardIndexRow> parse_shard_index(const std::string& text, const std::string& where);

// The members of each shard (each sample's media, and its caption as KEY.txt), by shard name,
// under the rule a shard's own tar headers meet (data/tar_index.hpp): a member whose name is
// absolute or has a ".." component, or whose byte range ends past 2^64, is rejected with the
// reason, never located.
std::map<std::string, TarScan> shard_members(const std::vector<ShardIndexRow>& rows);

}  // namespace mmprof
