// index.csv of `mmprof shard` (data/shard_index.hpp): what the writer writes the reader reads
// back, keys that need quoting included, and a damaged file is refused with its name and row.
#include "data/shard_index.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
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
  const auto shards = shard_members(rows);
  const auto& first = shards.at("shard-000000.tar").members;
  ASSERT_EQ(first.size(), 2u);  // the media and the caption
  EXPECT_EQ(first[1].name, "000001.txt");
  EXPECT_EQ(first[1].offset, 3072u);
  ASSERT_EQ(shards.at("shard-000001.tar").members.size(), 1u);
  EXPECT_EQ(shards.at("shard-000001.tar").members[0].name, "a,\"b\"\nc.mp4");
  EXPECT_EQ(parse_shard_index(shard_index_csv(rows), "index.csv"), rows);
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
  // What std::stoull alone takes: a sign (-1 read as 2^64 - 1), a space; and a count past 2^64.
  for (const char* count : {"-1", "+5", " 5", "18446744073709551616"}) {
    EXPECT_NE(refused(header + "k,s," + count + ",2,,,jpg\n")
                  .find(fmt::format("media_offset '{}' is not a byte count", count)),
              std::string::npos)
        << count;
  }
}

// A remote index.csv meets the rule of a shard's own tar headers (issue 34, case 4): a key that
// climbs out ("../../etc/passwd") or is absolute is rejected with the reason, as is a byte range
// past 2^64; the other rows of the shard are kept.
TEST(ShardIndex, AMemberAShardItselfWouldRefuseIsRejectedWithTheReason) {
  const std::vector<ShardIndexRow> rows = {
      {"../../etc/passwd", "s.tar", "jpg", 512, 10, std::nullopt, std::nullopt},
      {"/abs", "s.tar", "jpg", 1024, 10, std::nullopt, std::nullopt},
      {"big", "s.tar", "jpg", UINT64_MAX - 5, 10, std::nullopt, std::nullopt},
      {"ok", "s.tar", "jpg", 2048, 10, 4096, 3}};
  const TarScan scan = shard_members(rows).at("s.tar");
  ASSERT_EQ(scan.members.size(), 2u);
  EXPECT_EQ(scan.members[0].name, "ok.jpg");
  EXPECT_EQ(scan.members[1].name, "ok.txt");
  ASSERT_EQ(scan.rejected.size(), 3u);
  EXPECT_EQ(scan.rejected[0].name, "../../etc/passwd.jpg");
  EXPECT_EQ(scan.rejected[0].reason, "index.csv: member path with '..', not used");
  EXPECT_EQ(scan.rejected[1].reason, "index.csv: absolute member path, not used");
  EXPECT_NE(scan.rejected[2].reason.find("end past 2^64"), std::string::npos);
}

}  // namespace
}  // namespace mmprof
