// index.csv of `mmprof shard` (data/shard_index.hpp): what the writer writes the reader reads
// back, keys that need quoting included, and a damaged file is refused with its name and row.
#include "data/shard_index.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mmprof/error.hpp"

namespace mmprof {
namespace {

std::vector<ShardIndexRow> sample_rows() {
  ShardIndexRow plain{"000001", "shard-000000.tar", "jpg", 512, 2048, 3072, 11};
  ShardIndexRow odd{"a,\"b\"\nc", "shard-000001.tar", "mp4", 512, 99, std::nullopt, std::nullopt};
  return {plain, odd};
}

TEST(ShardIndex, TheWrittenFileIsTheHeaderAndOneRowPerSample) {
  EXPECT_EQ(shard_index_csv({sample_rows().front()}),
            "key,shard,media_offset,media_bytes,caption_offset,caption_bytes,media_ext\n"
            "000001,shard-000000.tar,512,2048,3072,11,jpg\n");
}

TEST(ShardIndex, WhatIsWrittenReadsBackQuotedKeysAndMissingCaptionsIncluded) {
  const auto rows = parse_shard_index(shard_index_csv(sample_rows()), "index.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].key, "a,\"b\"\nc");
  EXPECT_EQ(rows[1].media_ext, "mp4");
  EXPECT_FALSE(rows[1].caption_offset.has_value());
  EXPECT_EQ(rows[0].caption_bytes, 11u);
  const auto members = shard_members(rows);
  ASSERT_EQ(members.at("shard-000000.tar").size(), 2u);  // the media and the caption
  EXPECT_EQ(members.at("shard-000000.tar")[1].name, "000001.txt");
  EXPECT_EQ(members.at("shard-000000.tar")[1].offset, 3072u);
  ASSERT_EQ(members.at("shard-000001.tar").size(), 1u);
  EXPECT_EQ(members.at("shard-000001.tar")[0].name, "a,\"b\"\nc.mp4");
}

TEST(ShardIndex, ADamagedFileIsRefusedNamingTheFileAndTheRow) {
  const auto refused = [](const std::string& text) {
    try {
      parse_shard_index(text, "http://127.0.0.1/x/index.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("key,shard\nk,s\n").find("has no column media_offset"), std::string::npos);
  const std::string header =
      "key,shard,media_offset,media_bytes,caption_offset,caption_bytes,media_ext\n";
  EXPECT_NE(refused(header + "k,s,1\n").find("row 2 has 3 fields"), std::string::npos);
  EXPECT_NE(refused(header + "k,s,1x,2,,,jpg\n").find("row 2: media_offset '1x' is not a byte"),
            std::string::npos);
  EXPECT_EQ(refused(header + "k,s,1,2,,,jpg\n"), "");  // a valid row
}

}  // namespace
}  // namespace mmprof
