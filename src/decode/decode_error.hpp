#pragma once
#include <stdexcept>
#include <string>

namespace mmprof {

// A sample whose bytes cannot be decoded. Caught per sample by the worker and turned into an
// errors.jsonl entry (stage "decode") under on_error=skip.
class DecodeError : public std::runtime_error {
 public:
  explicit DecodeError(const std::string& m) : std::runtime_error(m) {}
};

}  // namespace mmprof
