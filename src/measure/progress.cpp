#include "measure/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mmprof {
namespace {

// Half a second and two steps: before that, a rate is the first step's noise.
constexpr double kRateAfterS = 0.5;
constexpr int64_t kRateAfterSteps = 2;
constexpr int64_t kRedrawNs = 200'000'000;

double seconds_between(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

// The ETA of what remains at the pace so far.
std::string eta_text(double elapsed_s, int64_t done, int64_t total) {
  if (done <= 0 || elapsed_s < kRateAfterS) return "ETA --";
  return "ETA " +
         human_duration(elapsed_s * static_cast<double>(total - done) / static_cast<double>(done));
}

}  // namespace

std::string human_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::lround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

ProgressLine::ProgressLine(ProgressStyle style, std::function<int64_t()> now_ns,
                           std::function<void(const std::string&)> out)
    : style_(style),
      now_ns_(std::move(now_ns)),
      out_(out ? std::move(out) : std::function<void(const std::string&)>([](const std::string& s) {
        std::fputs(s.c_str(), stderr);
      })),
      start_ns_(style_ == ProgressStyle::none ? 0 : now_ns_()) {}

void ProgressLine::draw(const std::string& text, bool final) {
  if (style_ == ProgressStyle::live) {
    out_("\r\033[K  " + text);
    drawn_ = true;
  } else if (final) {
    out_("mmprof: " + text + "\n");
  }
}

void ProgressLine::update(const std::string& phase, int64_t done, int64_t total,
                          double samples_per_s, const char* unit) {
  if (style_ == ProgressStyle::none) return;
  const int64_t now = now_ns_();
  if (phase != phase_) {
    phase_ = phase;
    phase_start_ns_ = now;
    last_draw_ns_ = 0;
    phase_done_ = false;
  }
  if (done == 0) phase_start_ns_ = now;  // the phase's count starts here (after its warm-up)
  if (phase_done_) return;
  const bool final = done >= total;
  done = std::min(done, total);
  if (style_ == ProgressStyle::live && now - last_draw_ns_ < kRedrawNs && !final) return;
  if (style_ == ProgressStyle::lines && !final) return;
  last_draw_ns_ = now;
  const double elapsed = seconds_between(phase_start_ns_, now);
  if (final) {
    phase_done_ = true;
    draw(fmt::format("{}: {} {} in {}{}", phase, done, unit, human_duration(elapsed),
                     samples_per_s > 0 ? fmt::format(", {:.1f} samples/s", samples_per_s) : ""),
         true);
    return;
  }
  const std::string rate = samples_per_s > 0 && done >= kRateAfterSteps && elapsed >= kRateAfterS
                               ? fmt::format("{:.1f} samples/s", samples_per_s)
                               : "-- samples/s";
  draw(fmt::format("{:<10} {:>5}/{:<5} {} {:>18}  {}", phase, done, total, unit, rate,
                   eta_text(elapsed, done, total)),
       false);
}

void ProgressLine::unit_done(const std::string& what, int64_t done, int64_t total,
                             const std::string& result) {
  if (style_ == ProgressStyle::none) return;
  const int64_t now = now_ns_();
  last_draw_ns_ = now;
  draw(fmt::format("{} {}/{}: {}; {}", what, done, total, result,
                   eta_text(seconds_between(start_ns_, now), done, total)),
       true);
}

void ProgressLine::print_above(const std::string& text) {
  finish();
  out_(text);
  last_draw_ns_ = 0;
}

void ProgressLine::finish() {
  if (drawn_) out_("\r\033[K");
  drawn_ = false;
}

}  // namespace mmprof
