#pragma once
// UTF-8 validation of captions: a loader that reads text as UTF-8 (Python's str, WebDataset's
// .txt decoder) fails on anything else, so such a sample is refused rather than tokenized.
#include <cstddef>
#include <optional>
#include <string_view>

namespace mmprof {

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), or nullopt when `text` is valid.
std::optional<size_t> first_invalid_utf8(std::string_view text) noexcept;

}  // namespace mmprof
