#include "run/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace mmprof {

ProgressLine::ProgressLine(bool enabled, std::function<int64_t()> now_ns)
    : enabled_(enabled && isatty(STDERR_FILENO) != 0), now_ns_(std::move(now_ns)) {}

void ProgressLine::update(const std::string& phase, int64_t done, int64_t total,
                          double samples_per_s) {
  if (!enabled_) return;
  const int64_t now = now_ns_();
  if (phase != phase_) {
    phase_ = phase;
    phase_start_ns_ = now;
  }
  if (now - last_draw_ns_ < 200'000'000 && done < total) return;
  last_draw_ns_ = now;
  const double elapsed = static_cast<double>(now - phase_start_ns_) / 1e9;
  const double eta = done > 0 ? elapsed * static_cast<double>(total - done) / double(done) : 0;
  const std::string line =
      fmt::format("\r  {:<10} step {:>5}/{:<5} {:>9.1f} samples/s  ETA {:>5.1f} s ", phase, done,
                  total, samples_per_s, eta);
  std::fputs(line.c_str(), stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::fputs("\r\033[K", stderr);
  drawn_ = false;
}

}  // namespace mmprof
