#pragma once
// The progress of a run's phases or an experiment's trials on stderr (mmprof/progress.hpp's
// styles): on a terminal a line redrawn in place at most five times a second, with the rate and
// the ETA; in a log one plain line per finished phase or trial. A rate is shown only once it
// means something (two steps and half a second in), so the first tick never shows an absurd one.
#include <cstdint>
#include <functional>
#include <string>

#include "mmprof/progress.hpp"
#include "probe/clock.hpp"

namespace mmprof {

class ProgressLine {
 public:
  // `now_ns`: the clock the rates and ETAs are computed with; `out`: where lines go (stderr).
  explicit ProgressLine(ProgressStyle style, std::function<int64_t()> now_ns = monotonic_ns,
                        std::function<void(const std::string&)> out = {});
  // `done` of `total` steps (or another `unit`) of `phase`, at `samples_per_s` (0: not known); a
  // log gets the phase's line when its last step is done. Its time counts from the last update
  // with `done` 0 (else from its first update).
  void update(const std::string& phase, int64_t done, int64_t total, double samples_per_s,
              const char* unit = "steps");
  // Unit `done` of `total` (an experiment's trial) finished with `result`: a log gets one line
  // each; the ETA is the whole sequence's.
  void unit_done(const std::string& what, int64_t done, int64_t total, const std::string& result);
  void finish();
  // `text` (whole lines) printed above the progress line, which the next update redraws: output
  // that is not mmprof's (a job's), whatever the style.
  void print_above(const std::string& text);

 private:
  void draw(const std::string& text, bool final);

  ProgressStyle style_;
  std::function<int64_t()> now_ns_;
  std::function<void(const std::string&)> out_;
  int64_t start_ns_ = 0;
  int64_t last_draw_ns_ = 0;
  int64_t phase_start_ns_ = 0;
  std::string phase_;
  bool phase_done_ = false;  // its final line is out: later updates (a job's last batches) add none
  bool drawn_ = false;
};

// "12 s", "3 min 20 s", "1 h 05 min": a duration as a person reads it.
std::string human_duration(double seconds);

}  // namespace mmprof
