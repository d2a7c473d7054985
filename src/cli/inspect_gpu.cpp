#include "cli/inspect_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "gpu/gpu_timeline.hpp"
#include "mmprof/error.hpp"

namespace mmprof::cli {
namespace {

using gpu::GpuEvent;

std::string row(const std::string& name, const std::string& value) {
  return fmt::format("  {:<22} {}\n", name, value);
}

std::string ms(int64_t ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

std::string percent(double f) {
  return std::isnan(f) ? "n/a" : fmt::format("{:.2f} %", 100 * f);
}

std::string mb_per_s(double v, uint64_t bytes) {
  if (std::isnan(v)) return "n/a (no copy)";
  return fmt::format("{:.1f} MB/s ({:.1f} MB)", v, static_cast<double>(bytes) / 1e6);
}

std::string top_kernels(const std::vector<GpuEvent>& events, size_t limit) {
  struct Total {
    int64_t ns = 0;
    size_t count = 0;
  };
  std::map<std::string, Total> by_name;
  int64_t all_ns = 0;
  for (const GpuEvent& e : events) {
    if (e.kind != gpu::GpuEventKind::kernel) continue;
    Total& t = by_name[e.name];
    t.ns += e.duration_ns();
    ++t.count;
    all_ns += e.duration_ns();
  }
  std::vector<std::pair<std::string, Total>> sorted(by_name.begin(), by_name.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::string out = "top kernels by time\n";
  if (sorted.empty()) out += row("(none)", "");
  for (size_t i = 0; i < std::min(limit, sorted.size()); ++i) {
    const auto& [name, t] = sorted[i];
    out +=
        fmt::format("  {:>12} {:>7.2f} % {:>7}x  {}\n", ms(t.ns),
                    100.0 * static_cast<double>(t.ns) / static_cast<double>(all_ns), t.count, name);
  }
  return out;
}

}  // namespace

std::string format_gpu_events_summary(const gpu::GpuEventsFile& f) {
  const gpu::GpuEventsHeader& h = f.header;
  std::string out = fmt::format("GPU events of process {} ({} events)\n", h.pid, f.events.size());
  out += row("cupti", h.cupti_library);
  out += row("clock", fmt::format("CLOCK_MONOTONIC via {} (offset {} ns)", h.clock_method,
                                  h.clock_offset_ns));
  out += row("records lost", fmt::format("{} dropped, {} incomplete", h.dropped, h.incomplete));
  int64_t first = 0, last = 0;
  bool any = false;
  for (const GpuEvent& e : f.events) {
    if (!e.is_busy()) continue;
    first = any ? std::min(first, e.start_ns) : e.start_ns;
    last = any ? std::max(last, e.end_ns) : e.end_ns;
    any = true;
  }
  if (!any) return out + row("GPU activity", "none recorded (no kernel, copy or set)");
  const gpu::GpuSummary s = gpu::summarize_gpu(f.events, {{first, last}}, {});
  out += "GPU-active window (first to last busy event)\n";
  out += row("window", ms(s.window_ns));
  out += row("busy", fmt::format("{} ({})", ms(s.busy_ns), percent(1 - s.idle_fraction)));
  out += row("idle", fmt::format("{} ({})", ms(s.idle_ns), percent(s.idle_fraction)));
  out += row("kernel busy", percent(s.kernel_busy_fraction));
  out += row("events", fmt::format("{} kernels, {} memcpy, {} memset, {} synchronisation",
                                   s.kernels, s.memcpys, s.memsets, s.synchronizations));
  out += row("H2D pinned", mb_per_s(s.h2d_mb_per_s_pinned, s.h2d_bytes_pinned));
  out += row("H2D pageable", mb_per_s(s.h2d_mb_per_s_pageable, s.h2d_bytes_pageable));
  out += row("copy/compute overlap", percent(s.copy_compute_overlap_fraction));
  return out + top_kernels(f.events, 10);
}

std::string format_planted_check(const gpu::PlantedCheck& c, double tolerance) {
  std::string out = fmt::format("planted-schedule check (tolerance {:.2f} %)\n", 100 * tolerance);
  out += fmt::format("  {:<20} {:>12} {:>12} {:>8}  {}\n", "figure", "planted ms", "measured ms",
                     "error", "");
  for (const gpu::PlantedFigure& f : c.figures) {
    out += fmt::format("  {:<20} {:>12.3f} {:>12.3f} {:>7.2f} %  {}\n", f.name, f.planted_ms,
                       f.measured_ms, 100 * f.relative_error,
                       !f.gated ? "(cross-check)"
                       : f.ok   ? "ok"
                                : "FAIL");
  }
  for (const std::string& failure : c.failures)
    out += "  FAIL: " + failure + "\n";
  out += c.passed() ? "  result: PASS\n" : "  result: FAIL\n";
  return out;
}

int run_inspect_gpu_events(const std::string& events_path, const std::string& plan_path,
                           double tolerance) {
  const gpu::GpuEventsFile file = gpu::read_gpu_events(events_path);
  std::fputs(format_gpu_events_summary(file).c_str(), stdout);
  if (plan_path.empty()) return 0;
  std::ifstream in(plan_path);
  if (!in) throw InputError("cannot open planted plan " + plan_path);
  const auto plan_json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (plan_json.is_discarded()) throw InputError(plan_path + " is not valid JSON");
  const gpu::PlantedCheck check =
      gpu::check_planted(gpu::parse_planted_plan(plan_json, plan_path), file.events, tolerance);
  std::fputs(format_planted_check(check, tolerance).c_str(), stdout);
  std::fflush(stdout);
  if (!check.passed()) throw RunError("planted-schedule check failed: " + check.failures.front());
  return 0;
}

}  // namespace mmprof::cli
