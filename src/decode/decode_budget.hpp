#pragma once
// The per-sample decode time budget (image.max_decode_ms, video.max_decode_ms): started when the
// decode of a sample starts and checked where a decoder can stop cleanly (libjpeg-turbo's
// progress monitor: every row of blocks of every scan; the video decoder: every packet). A decode
// past its budget fails the sample with a DecodeError, never the worker, so one pathological file
// (a progressive JPEG of thousands of scans) costs at most the budget. FFmpeg's still-image
// decoders run one call per image and are not interrupted; image.max_pixels and image.max_bytes
// bound them. The clock is injected, so tests expire a budget without waiting.
#include <cstdint>
#include <string>

namespace mmprof {

class DecodeBudget {
 public:
  using Clock = int64_t (*)() noexcept;  // nanoseconds, monotonic
  static int64_t steady_ns() noexcept;

  DecodeBudget() = default;  // no budget
  // limit_ms <= 0: no budget. `key` names the limit in messages ("image.max_decode_ms").
  DecodeBudget(int64_t limit_ms, const char* key, Clock clock = steady_ns)
      : limit_ns_(limit_ms * 1'000'000), key_(key), clock_(clock) {}

  void start() noexcept {
    if (limit_ns_ > 0) start_ns_ = clock_();
  }
  // One clock read; false when there is no budget. Safe to call from C callbacks.
  bool expired() const noexcept {
    if (limit_ns_ <= 0) return false;
    elapsed_ns_ = clock_() - start_ns_;
    return elapsed_ns_ > limit_ns_;
  }
  // "decode stopped after 10012 ms, past image.max_decode_ms=10000", from the last expired().
  std::string message() const;
  // Throws DecodeError(message()) when expired().
  void check() const;

 private:
  int64_t limit_ns_ = 0;
  const char* key_ = "";
  Clock clock_ = steady_ns;
  int64_t start_ns_ = 0;
  mutable int64_t elapsed_ns_ = 0;
};

}  // namespace mmprof
