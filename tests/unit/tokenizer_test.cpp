// The byte-level tokenizer: exact ids (byte + 3), BOS/EOS/PAD placement, truncation.
#include "data/tokenizer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof {
namespace {

constexpr int32_t kSentinel = -7;

struct Tokens {
  std::vector<int32_t> ids;
  int non_pad = 0;
};

// Tokenizes into a buffer with a guard slot after seq_len, to catch writes past the end.
Tokens tokenize(std::string_view text, int seq_len) {
  std::vector<int32_t> buffer(static_cast<size_t>(seq_len) + 1, kSentinel);
  Tokens t;
  t.non_pad = tokenize_bytes(text, buffer.data(), seq_len);
  EXPECT_EQ(buffer.back(), kSentinel) << "wrote past seq_len";
  buffer.pop_back();
  t.ids = buffer;
  return t;
}

TEST(TokenizerTest, SpecialIdsAreFixed) {
  EXPECT_EQ(kTokenPad, 0);
  EXPECT_EQ(kTokenBos, 1);
  EXPECT_EQ(kTokenEos, 2);
}

TEST(TokenizerTest, ExactIdsThenPadding) {
  const Tokens t = tokenize("ab", 6);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 'a' + 3, 'b' + 3, 2, 0, 0}));
  EXPECT_EQ(t.non_pad, 4);
}

TEST(TokenizerTest, ExactFitHasNoPadding) {
  const Tokens t = tokenize("abc", 5);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 100, 101, 102, 2}));
  EXPECT_EQ(t.non_pad, 5);
}

TEST(TokenizerTest, BytesAreUnsigned) {
  // UTF-8 "é" is 0xC3 0xA9; 0xFF is the largest byte: ids stay positive and distinct from specials.
  const Tokens t = tokenize("\xC3\xA9\xFF", 6);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 0xC3 + 3, 0xA9 + 3, 0xFF + 3, 2, 0}));
  EXPECT_EQ(t.non_pad, 5);
}

TEST(TokenizerTest, NulByteIsATokenNotTheEnd) {
  const Tokens t = tokenize(std::string_view("a\0b", 3), 6);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 100, 3, 101, 2, 0}));
}

TEST(TokenizerTest, TruncationKeepsEosLast) {
  const Tokens t = tokenize("abcdef", 4);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 100, 101, 2}));
  EXPECT_EQ(t.non_pad, 4);
}

TEST(TokenizerTest, LongTextFillsSeqLenExactly) {
  const std::string text(1000, 'x');
  const Tokens t = tokenize(text, 77);
  ASSERT_EQ(t.ids.size(), 77u);
  EXPECT_EQ(t.ids.front(), kTokenBos);
  EXPECT_EQ(t.ids.back(), kTokenEos);
  for (size_t i = 1; i + 1 < t.ids.size(); ++i)
    EXPECT_EQ(t.ids[i], 'x' + 3) << i;
  EXPECT_EQ(t.non_pad, 77);
}

TEST(TokenizerTest, EmptyTextIsBosEosThenPadding) {
  const Tokens t = tokenize("", 4);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1, 2, 0, 0}));
  EXPECT_EQ(t.non_pad, 2);
}

TEST(TokenizerTest, SeqLenTwoIsBosEos) {
  EXPECT_EQ(tokenize("abc", 2).ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(tokenize("abc", 2).non_pad, 2);
  EXPECT_EQ(tokenize("", 2).ids, (std::vector<int32_t>{1, 2}));
}

// With room for one id only BOS fits: the sequence still starts like every other one.
TEST(TokenizerTest, SeqLenOneIsBosOnly) {
  const Tokens t = tokenize("abc", 1);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{1}));
  EXPECT_EQ(t.non_pad, 1);
}

TEST(TokenizerTest, NonPositiveSeqLenWritesNothing) {
  int32_t guard = kSentinel;
  EXPECT_EQ(tokenize_bytes("abc", &guard, 0), 0);
  EXPECT_EQ(guard, kSentinel);
  EXPECT_EQ(tokenize_bytes("abc", &guard, -3), 0);
  EXPECT_EQ(guard, kSentinel);
}

TEST(TokenizerTest, NonPadCountMatchesTheIds) {
  for (int seq_len = 1; seq_len <= 12; ++seq_len) {
    for (size_t len = 0; len <= 12; ++len) {
      const Tokens t = tokenize(std::string(len, 'q'), seq_len);
      int non_pad = 0;
      for (const int32_t id : t.ids)
        non_pad += id != kTokenPad;
      EXPECT_EQ(t.non_pad, non_pad) << "seq_len " << seq_len << " len " << len;
      // Padding only ever follows the content.
      for (int i = t.non_pad; i < seq_len; ++i)
        EXPECT_EQ(t.ids[static_cast<size_t>(i)], kTokenPad);
    }
  }
}

}  // namespace
}  // namespace mmprof
