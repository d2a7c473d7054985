#pragma once
// Captions become fixed-length token ids. A byte-level tokenizer (id = byte + 3, with BOS=1,
// EOS=2, PAD=0) costs what real tokenizers cost in memory traffic without a vocabulary file.
#include <cstdint>
#include <string_view>

namespace mmprof {

constexpr int32_t kTokenPad = 0, kTokenBos = 1, kTokenEos = 2;

// Writes exactly seq_len ids: BOS, bytes, EOS, then PAD; truncated to fit (EOS kept last).
// Returns the number of non-pad tokens.
int tokenize_bytes(std::string_view text, int32_t* out, int seq_len) noexcept;

}  // namespace mmprof
