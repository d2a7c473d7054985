// Bad input at the unit level: the pixel limit (refused from the header, before any allocation),
// PNG CRCs, caption UTF-8 validation, and the tar reader against hand-made POSIX ustar files
// (paths outside the shard, links, a shard cut mid-member, garbage).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/tar_index.hpp"
#include "data/utf8.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "gen/image_encode.hpp"
#include "support/bad_corpus.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using test::append_tar_member;
using test::end_tar;

gen::RgbImage gradient(int w, int h) {
  gen::RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = static_cast<uint8_t>(i * 13 / 7);
  return img;
}

std::vector<uint8_t> small_jpeg() {
  std::vector<uint8_t> out;
  gen::JpegEncoder().encode(gradient(64, 48), 90, out);
  return out;
}

std::vector<uint8_t> small_png() {
  std::vector<uint8_t> out;
  gen::encode_png(gradient(64, 48), out);
  return out;
}

using test::decode_error;

TEST(PixelLimitTest, HugeJpegHeaderIsRefusedBeforeAnyPixelBufferExists) {
  const auto bomb = test::jpeg_claiming_size(small_jpeg(), 65500, 65500);
  ImageDecoder dec;  // the default limit, PIL's 178,956,970
  RgbImage img;
  const std::string what = decode_error(dec, bomb, img);
  EXPECT_NE(what.find("65500x65500 = 4290250000 pixels"), std::string::npos) << what;
  EXPECT_NE(what.find("image.max_pixels=178956970"), std::string::npos) << what;
  EXPECT_EQ(img.pixels.capacity(), 0u) << "a buffer was allocated for the refused image";
  EXPECT_THROW(dec.probe(bomb), DecodeError);
}

TEST(PixelLimitTest, TheLimitIsConfigurableAndInclusive) {
  const auto jpeg = small_jpeg();
  const auto png = small_png();
  RgbImage img;
  ImageDecoder exact(64 * 48);
  EXPECT_EQ(exact.probe(jpeg).width, 64);
  exact.decode(jpeg, {}, 0, DctScaling::off, img);
  EXPECT_EQ(img.height, 48);
  exact.decode(png, {}, 0, DctScaling::off, img);
  EXPECT_EQ(img.width, 64);
  ImageDecoder below(64 * 48 - 1);
  EXPECT_NE(decode_error(below, jpeg, img).find("64x48 = 3072 pixels"), std::string::npos);
  EXPECT_NE(decode_error(below, png, img).find("image.max_pixels=3071"), std::string::npos);
  EXPECT_THROW(below.probe(png), DecodeError);
}

// fuzz_image_probe's find: after this header failed once, the same TurboJPEG handle reported a
// 0x0 image for it. A failed handle is now replaced, and a 0-pixel side is refused.
TEST(PixelLimitTest, AFailedJpegHeaderFailsAgainOnTheSameDecoder) {
  const auto bytes =
      test::read_bytes(test::source_dir() / "tests/fuzz/corpus/image_probe/no-sos.jpg");
  ImageDecoder decoder;
  for (int attempt = 0; attempt < 3; ++attempt) {
    EXPECT_THROW(decoder.probe(bytes), DecodeError) << "attempt " << attempt;
  }
  const auto good = test::read_bytes(test::source_dir() / "tests/fuzz/corpus/image_probe/seed.jpg");
  EXPECT_EQ(decoder.probe(good).width, 24);
}

TEST(PngCrcTest, AChunkWithAWrongCrcIsADecodeError) {
  ImageDecoder dec;
  RgbImage img;
  dec.decode(small_png(), {}, 0, DctScaling::off, img);  // the intact file decodes
  EXPECT_FALSE(decode_error(dec, test::png_with_bad_crc(small_png()), img).empty());
}

TEST(Utf8Test, FirstInvalidByteIsFound) {
  EXPECT_EQ(first_invalid_utf8(""), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("caf\xE9"), 3u);           // Latin-1, not UTF-8
  EXPECT_EQ(first_invalid_utf8("ab\xFF"), 2u);            // never a lead byte
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(first_invalid_utf8("x\xED\xA0\x80"), 1u);     // a UTF-16 surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2u);        // cut mid-sequence
  EXPECT_EQ(first_invalid_utf8("\xE2\x28\xA1"), 0u);      // bad continuation
  EXPECT_EQ(first_invalid_utf8(std::string("a\0b", 3)), std::nullopt);
}

std::vector<uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(TarIndexTest, MembersAndDataOffsetsFollowThePosixLayout) {
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", bytes("12345"));
  append_tar_member(tar, "./a.txt", bytes("caption"));
  append_tar_member(tar, "dir/b.mp4", std::vector<uint8_t>(700, 7));
  end_tar(tar);
  const TarScan scan = scan_tar_memory(tar);
  ASSERT_EQ(scan.members.size(), 3u);
  EXPECT_TRUE(scan.rejected.empty());
  // header 512, data padded to 512: offsets 512, 1536, 2560
  EXPECT_EQ(scan.members[0].name, "a.jpg");
  EXPECT_EQ(scan.members[0].offset, 512u);
  EXPECT_EQ(scan.members[0].size, 5u);
  EXPECT_EQ(scan.members[1].name, "a.txt");
  EXPECT_EQ(scan.members[1].offset, 1536u);
  EXPECT_EQ(scan.members[2].offset, 2560u);
  EXPECT_EQ(scan.members[2].size, 700u);
  EXPECT_EQ(tar[scan.members[2].offset], 7);
}

TEST(TarIndexTest, PathsOutsideTheShardAndLinksAreRefusedNeverFollowed) {
  std::vector<uint8_t> tar;
  append_tar_member(tar, "../up.jpg", bytes("x"));
  append_tar_member(tar, "/etc/abs.jpg", bytes("x"));
  append_tar_member(tar, "a/../../b.jpg", bytes("x"));
  append_tar_member(tar, "sym.jpg", {}, '2', "/etc/passwd");
  append_tar_member(tar, "hard.jpg", {}, '1', "../up.jpg");
  append_tar_member(tar, "fine..name.jpg", bytes("ok"));
  end_tar(tar);
  const TarScan scan = scan_tar_memory(tar);
  ASSERT_EQ(scan.members.size(), 1u);
  EXPECT_EQ(scan.members[0].name, "fine..name.jpg");
  ASSERT_EQ(scan.rejected.size(), 5u);
  EXPECT_EQ(scan.rejected[0].name, "../up.jpg");
  EXPECT_NE(scan.rejected[0].reason.find(".."), std::string::npos);
  EXPECT_NE(scan.rejected[1].reason.find("absolute"), std::string::npos);
  EXPECT_EQ(scan.rejected[2].name, "a/../../b.jpg");
  EXPECT_NE(scan.rejected[3].reason.find("symbolic link to '/etc/passwd'"), std::string::npos);
  EXPECT_NE(scan.rejected[4].reason.find("hard link"), std::string::npos);
}

TEST(TarIndexTest, UnsafeNamesAreRecognised) {
  EXPECT_EQ(unsafe_member_name("a/b.jpg"), std::nullopt);
  EXPECT_EQ(unsafe_member_name("a..b/c...jpg"), std::nullopt);
  EXPECT_NE(unsafe_member_name(".."), std::nullopt);
  EXPECT_NE(unsafe_member_name("a/.."), std::nullopt);
  EXPECT_NE(unsafe_member_name("/a"), std::nullopt);
  EXPECT_NE(unsafe_member_name(""), std::nullopt);
}

TEST(TarIndexTest, AShardCutMidMemberKeepsTheMembersBeforeTheCut) {
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", std::vector<uint8_t>(600, 1));
  append_tar_member(tar, "b.jpg", std::vector<uint8_t>(3000, 2));
  tar.resize(tar.size() - 2000);  // inside b's data
  const TarScan scan = scan_tar_memory(tar);
  ASSERT_EQ(scan.members.size(), 1u);
  EXPECT_EQ(scan.members[0].name, "a.jpg");
  ASSERT_EQ(scan.rejected.size(), 1u);
  EXPECT_EQ(scan.rejected[0].name, "b.jpg");
  EXPECT_NE(scan.rejected[0].reason.find("cut mid-member"), std::string::npos);
}

TEST(TarIndexTest, GarbageAfterGoodMembersIsReportedNotThrown) {
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", bytes("abc"));
  tar.resize(tar.size() + 512, 0x5A);  // a "header" whose checksum cannot match
  const TarScan scan = scan_tar_memory(tar);
  ASSERT_EQ(scan.members.size(), 1u);
  ASSERT_EQ(scan.rejected.size(), 1u);
  EXPECT_NE(scan.rejected[0].reason.find("after 1 members"), std::string::npos);
  EXPECT_FALSE(scan_tar_memory(bytes("not a tar at all")).rejected.empty());
}

// A member whose size field claims more than it holds: the headers that follow lie inside its
// claimed data. It is refused, and every member after it is kept (before: the next header was
// read from the middle of c's data, and c and d were dropped without a word).
TEST(TarIndexTest, ASizeFieldThatLiesIsRefusedAndTheMembersAfterItAreKept) {
  for (const bool past_the_end : {false, true}) {
    SCOPED_TRACE(past_the_end ? "claims past the end" : "claims into later members");
    std::vector<uint8_t> tar;
    append_tar_member(tar, "a.jpg", std::vector<uint8_t>(600, 1));
    const size_t b_header = tar.size();
    append_tar_member(tar, "b.jpg", std::vector<uint8_t>(100, 2));
    // 4000 puts b's end inside e's data, 100000 past the end of the shard.
    const auto lying = test::ustar_header("b.jpg", past_the_end ? 100000 : 4000);
    std::copy(lying.begin(), lying.end(), tar.begin() + static_cast<ptrdiff_t>(b_header));
    append_tar_member(tar, "c.jpg", std::vector<uint8_t>(700, 3));
    append_tar_member(tar, "d.jpg", bytes("d"));
    if (!past_the_end) append_tar_member(tar, "e.bin", std::vector<uint8_t>(4000, 4));
    end_tar(tar);
    const TarScan scan = scan_tar_memory(tar);
    std::vector<std::string> names;
    for (const auto& m : scan.members)
      names.push_back(m.name);
    EXPECT_EQ(names, past_the_end ? (std::vector<std::string>{"a.jpg", "c.jpg", "d.jpg"})
                                  : (std::vector<std::string>{"a.jpg", "c.jpg", "d.jpg", "e.bin"}));
    ASSERT_EQ(scan.rejected.size(), 1u);
    EXPECT_EQ(scan.rejected[0].name, "b.jpg");
    EXPECT_NE(scan.rejected[0].reason.find("size field says"), std::string::npos)
        << scan.rejected[0].reason;
    EXPECT_NE(scan.rejected[0].reason.find("512 bytes into its data"), std::string::npos)
        << scan.rejected[0].reason;
    EXPECT_EQ(tar[scan.members[1].offset], 3);  // c's data, where its header says
  }
}

// A size field that claims less than the member holds, and a header damaged in place: the
// damage is one rejection naming its byte, and reading resumes at the next valid header.
TEST(TarIndexTest, ACorruptHeaderIsSkippedToTheNextValidOne) {
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", bytes("abc"));
  const size_t b_header = tar.size();
  append_tar_member(tar, "b.jpg", std::vector<uint8_t>(1500, 7));
  const auto short_size = test::ustar_header("b.jpg", 100);  // holds 1500: 3 blocks, not 1
  std::copy(short_size.begin(), short_size.end(), tar.begin() + static_cast<ptrdiff_t>(b_header));
  append_tar_member(tar, "c.jpg", bytes("c"));
  const size_t d_header = tar.size();
  append_tar_member(tar, "d.jpg", bytes("d"));
  tar[d_header + 3] ^= 0x40;  // a bit flipped in d's name: its checksum no longer matches
  append_tar_member(tar, "e.jpg", bytes("e"));
  end_tar(tar);
  const TarScan scan = scan_tar_memory(tar);
  std::vector<std::string> names;
  for (const auto& m : scan.members)
    names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a.jpg", "b.jpg", "c.jpg", "e.jpg"}));
  ASSERT_EQ(scan.rejected.size(), 2u);
  EXPECT_EQ(scan.rejected[0].reason.rfind("corrupt tar header at byte 2048", 0), 0u)
      << scan.rejected[0].reason;
  EXPECT_NE(scan.rejected[0].reason.find("1024 bytes skipped to the next tar header, at byte 3072"),
            std::string::npos)
      << scan.rejected[0].reason;
  EXPECT_NE(scan.rejected[1].reason.find("at byte " + std::to_string(d_header) + " "),
            std::string::npos)
      << scan.rejected[1].reason;
}

// A shard that is not a tar archive at all is one rejection that says what it is, never an
// exception; a damaged first header or a zeroed header keeps the members after it.
TEST(TarIndexTest, EmptyCompressedAndHeadlessShardsAreRejectionsOfTheShard) {
  const auto reason = [](const std::vector<uint8_t>& shard) {
    const TarScan scan = scan_tar_memory(shard);
    EXPECT_TRUE(scan.members.empty());
    return scan.rejected.size() == 1 ? scan.rejected[0].reason : "(not one rejection)";
  };
  EXPECT_EQ(reason({}), "empty shard (0 bytes), not a tar archive");
  std::vector<uint8_t> tar;
  append_tar_member(tar, "a.jpg", bytes("abc"));
  end_tar(tar);
  std::vector<uint8_t> gz = {0x1F, 0x8B, 0x08, 0x00};
  gz.insert(gz.end(), tar.begin(), tar.end());
  EXPECT_NE(reason(gz).find("gzip-compressed, not a plain tar archive"), std::string::npos)
      << reason(gz);
  EXPECT_NE(reason(bytes("just some text")).find("not a tar archive"), std::string::npos);

  std::vector<uint8_t> headless(512, 0x5A);
  headless.insert(headless.end(), tar.begin(), tar.end());
  TarScan scan = scan_tar_memory(headless);
  ASSERT_EQ(scan.members.size(), 1u);
  EXPECT_EQ(scan.members[0].offset, 1024u);
  ASSERT_EQ(scan.rejected.size(), 1u);
  EXPECT_EQ(scan.rejected[0].reason.rfind("corrupt tar header at byte 0", 0), 0u)
      << scan.rejected[0].reason;

  std::vector<uint8_t> zeroed;
  append_tar_member(zeroed, "a.jpg", bytes("abc"));
  const size_t b_header = zeroed.size();
  append_tar_member(zeroed, "b.jpg", bytes("lost"));
  append_tar_member(zeroed, "c.jpg", bytes("kept"));
  end_tar(zeroed);
  std::fill_n(zeroed.begin() + static_cast<ptrdiff_t>(b_header), 512, 0);
  scan = scan_tar_memory(zeroed);
  ASSERT_EQ(scan.members.size(), 2u);
  EXPECT_EQ(scan.members[1].name, "c.jpg");
  ASSERT_EQ(scan.rejected.size(), 1u);
  EXPECT_NE(scan.rejected[0].reason.find("read as the end of the archive"), std::string::npos)
      << scan.rejected[0].reason;
}

TEST(TarIndexTest, HeaderBlocksAreRecognisedByTheirChecksum) {
  auto header = test::ustar_header("a.jpg", 5);
  EXPECT_TRUE(is_tar_header_block(std::span<const uint8_t, 512>(header.data(), 512)));
  header[0] ^= 1;
  EXPECT_FALSE(is_tar_header_block(std::span<const uint8_t, 512>(header.data(), 512)));
  const std::vector<uint8_t> zeros(512, 0);
  EXPECT_FALSE(is_tar_header_block(std::span<const uint8_t, 512>(zeros.data(), 512)));
}

}  // namespace
}  // namespace mmprof
