#include "data/tokenizer.hpp"

#include <algorithm>

namespace mmprof {

int tokenize_bytes(std::string_view text, int32_t* out, int seq_len) noexcept {
  if (seq_len <= 0) return 0;
  int n = 0;
  out[n++] = kTokenBos;
  const int room = std::max(0, seq_len - 2);
  const int take = std::min(room, static_cast<int>(text.size()));
  for (int i = 0; i < take; ++i)
    out[n++] = static_cast<unsigned char>(text[static_cast<size_t>(i)]) + 3;
  if (n < seq_len) out[n++] = kTokenEos;
  std::fill(out + n, out + seq_len, kTokenPad);
  return n;
}

}  // namespace mmprof
