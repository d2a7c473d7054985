#include "data/utf8.hpp"

#include <cstdint>

namespace mmprof {
namespace {

// Length of the sequence that starts with `lead`, and the allowed range of its second byte
// (the Unicode standard's table 3-7 of well-formed byte sequences); 0 for a byte that cannot lead.
struct Lead {
  int length;
  uint8_t lo, hi;
};

Lead lead_of(uint8_t b) noexcept {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};  // no overlong 3-byte forms
  if (b == 0xED) return {3, 0x80, 0x9F};  // no UTF-16 surrogates
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};  // no overlong 4-byte forms
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

}  // namespace

std::optional<size_t> first_invalid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const Lead lead = lead_of(p[i]);
    if (lead.length == 0) return i;
    if (lead.length == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= n || p[i + 1] < lead.lo || p[i + 1] > lead.hi) return i;
    for (int k = 2; k < lead.length; ++k) {
      if (i + static_cast<size_t>(k) >= n || (p[i + k] & 0xC0) != 0x80) return i;
    }
    i += static_cast<size_t>(lead.length);
  }
  return std::nullopt;
}

}  // namespace mmprof
