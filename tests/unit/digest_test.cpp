// digest64 / digest_combine: any one changed byte changes the digest, equal inputs agree.
#include "util/digest.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace mmprof {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>((i * 131 + 17) & 0xFF);
  return v;
}

uint64_t digest(const std::vector<uint8_t>& v, uint64_t seed = 0) {
  return digest64(v.data(), v.size(), seed);
}

TEST(DigestTest, EqualInputsGiveEqualDigests) {
  for (const size_t n : {0u, 1u, 7u, 31u, 32u, 33u, 100u, 4096u}) {
    const auto a = pattern(n);
    const auto b = pattern(n);  // a different buffer with the same bytes
    EXPECT_EQ(digest(a), digest(b)) << n;
    EXPECT_EQ(digest(a, 99), digest(b, 99)) << n;
  }
}

// Sizes around the 32-byte block so that both the lanes and the byte-wise tail are exercised.
TEST(DigestTest, OneFlippedByteAnywhereChangesTheDigest) {
  for (const size_t n : {1u, 2u, 8u, 31u, 32u, 33u, 39u, 63u, 64u, 65u, 100u}) {
    const auto base = pattern(n);
    const uint64_t d = digest(base);
    for (size_t i = 0; i < n; ++i) {
      for (const uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        auto changed = base;
        changed[i] ^= mask;
        EXPECT_NE(digest(changed), d) << "n " << n << " byte " << i << " mask " << int{mask};
      }
    }
  }
}

TEST(DigestTest, LengthMattersEvenForZeroBytes) {
  const std::vector<uint8_t> zeros(200, 0);
  std::set<uint64_t> seen;
  for (size_t n = 0; n <= zeros.size(); ++n)
    seen.insert(digest64(zeros.data(), n));
  EXPECT_EQ(seen.size(), zeros.size() + 1);
}

TEST(DigestTest, SeedMatters) {
  const auto v = pattern(100);
  EXPECT_NE(digest(v, 0), digest(v, 1));
  EXPECT_NE(digest(v, 1), digest(v, 2));
  EXPECT_NE(digest64(nullptr, 0, 0), digest64(nullptr, 0, 1));
}

TEST(DigestTest, SwappedWordsAndBlocksChangeTheDigest) {
  const auto base = pattern(64);
  auto words = base;
  std::swap_ranges(words.begin(), words.begin() + 8, words.begin() + 8);  // words 0 and 1
  EXPECT_NE(digest(words), digest(base));
  auto blocks = base;
  std::swap_ranges(blocks.begin(), blocks.begin() + 32, blocks.begin() + 32);  // blocks 0 and 1
  EXPECT_NE(digest(blocks), digest(base));
}

TEST(DigestTest, NoCollisionsAmongManySmallInputs) {
  std::set<uint64_t> seen;
  constexpr uint64_t kCount = 20000;
  for (uint64_t i = 0; i < kCount; ++i)
    seen.insert(digest64(&i, sizeof i));
  EXPECT_EQ(seen.size(), kCount);
}

TEST(DigestTest, CombineIsOrderDependentAndDeterministic) {
  const uint64_t a = digest(pattern(10)), b = digest(pattern(11));
  EXPECT_EQ(digest_combine(a, b), digest_combine(a, b));
  EXPECT_NE(digest_combine(a, b), digest_combine(b, a));
  EXPECT_NE(digest_combine(a, b), digest_combine(a, b + 1));
  EXPECT_NE(digest_combine(a, b), digest_combine(a + 1, b));
}

}  // namespace
}  // namespace mmprof
