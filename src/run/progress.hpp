#pragma once
// The progress line a baseline prints on a terminal: phase, step, rate and ETA, redrawn in place
// at most a few times a second. Silent when stderr is not a terminal.
#include <cstdint>
#include <functional>
#include <string>

#include "probe/clock.hpp"

namespace mmprof {

class ProgressLine {
 public:
  // `now_ns`: the clock the ETA is computed with.
  explicit ProgressLine(bool enabled, std::function<int64_t()> now_ns = monotonic_ns);
  void update(const std::string& phase, int64_t done, int64_t total, double samples_per_s);
  void finish();

 private:
  bool enabled_;
  std::function<int64_t()> now_ns_;
  int64_t last_draw_ns_ = 0;
  int64_t phase_start_ns_ = 0;
  std::string phase_;
  bool drawn_ = false;
};

}  // namespace mmprof
