#pragma once
// One clock for every process of a run: CLOCK_MONOTONIC in nanoseconds, so timestamps taken in
// worker processes and in the main process lie on one timeline.
#include <cstdint>
#include <ctime>

namespace mmprof {

inline int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The clock the phase runner reads; tests substitute a fake.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ns() = 0;
};

class MonotonicClock final : public Clock {
 public:
  int64_t now_ns() override { return monotonic_ns(); }
};

}  // namespace mmprof
