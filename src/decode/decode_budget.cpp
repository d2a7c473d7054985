#include "decode/decode_budget.hpp"

#include <fmt/format.h>

#include <chrono>

#include "decode/decode_error.hpp"

namespace mmprof {

int64_t DecodeBudget::steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string DecodeBudget::message() const {
  return fmt::format("decode stopped after {} ms, past {}={}", elapsed_ns_ / 1'000'000, key_,
                     limit_ns_ / 1'000'000);
}

void DecodeBudget::check() const {
  if (expired()) throw DecodeError(message());
}

}  // namespace mmprof
