#include "decode/pixel_limit.hpp"

#include <fmt/format.h>

#include "decode/decode_error.hpp"

namespace mmprof {

void check_pixel_limit(int64_t width, int64_t height, int64_t limit, const std::string& what,
                       const char* limit_key) {
  // Both sides are at most 2^31 in every format we read, so the product fits in 64 bits.
  const int64_t pixels = width * height;
  if (limit <= 0 || pixels <= limit) return;
  throw DecodeError(
      fmt::format("{} is {}x{} = {} pixels, above {}={}: refused from its header before decoding",
                  what, width, height, pixels, limit_key, limit));
}

}  // namespace mmprof
