#include "gpu/planted_check.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mmprof/error.hpp"

namespace mmprof::gpu {
namespace {

using nlohmann::json;

const json& member(const json& j, const char* key, const std::string& source) {
  if (!j.is_object() || !j.contains(key))
    throw InputError(fmt::format("{}: planted plan lacks \"{}\"", source, key));
  return j.at(key);
}

template <typename T>
T number(const json& j, const char* key, const std::string& source) {
  const json& v = member(j, key, source);
  if (!v.is_number_integer()) {
    throw InputError(
        fmt::format("{}: planted plan \"{}\" is not an integer ({})", source, key, v.dump()));
  }
  return v.get<T>();
}

Interval interval(const json& j, const std::string& source) {
  Interval i{number<int64_t>(j, "start_ns", source), number<int64_t>(j, "end_ns", source)};
  if (i.end_ns < i.start_ns) {
    throw InputError(
        fmt::format("{}: planted interval ends before it starts ({})", source, j.dump()));
  }
  return i;
}

PlantedFigure figure(const std::string& name, int64_t planted_ns, int64_t measured_ns,
                     double tolerance, bool gated) {
  PlantedFigure f;
  f.name = name;
  f.planted_ms = static_cast<double>(planted_ns) / 1e6;
  f.measured_ms = static_cast<double>(measured_ns) / 1e6;
  f.relative_error = planted_ns > 0 ? std::abs(f.measured_ms - f.planted_ms) / f.planted_ms
                                    : (measured_ns == 0 ? 0.0 : INFINITY);
  f.gated = gated;
  f.ok = f.relative_error <= tolerance;
  return f;
}

// Summed H2D bytes with the given host memory that start before `before_ns`.
uint64_t h2d_bytes_before(const std::vector<GpuEvent>& events, bool pinned, int64_t before_ns) {
  uint64_t bytes = 0;
  for (const GpuEvent& e : events) {
    if (e.kind == GpuEventKind::memcpy && e.copy == CopyKind::h2d && e.pinned_host == pinned &&
        e.start_ns < before_ns)
      bytes += e.bytes;
  }
  return bytes;
}

}  // namespace

PlantedPlan parse_planted_plan(const json& j, const std::string& source) {
  const auto schema = member(j, "schema", source);
  if (schema != "mmprof.gpu_plan/1")
    throw InputError(fmt::format("{}: not a planted plan (schema {})", source, schema.dump()));
  PlantedPlan p;
  const json& name = member(j, "kernel_name", source);
  if (!name.is_string())
    throw InputError(source + ": planted plan \"kernel_name\" is not a string");
  p.kernel_name = name.get<std::string>();
  p.kernels = number<int64_t>(j, "kernels", source);
  p.kernel_ns = number<int64_t>(j, "kernel_ns", source);
  p.gap_ns = number<int64_t>(j, "gap_ns", source);
  for (const json& c : member(j, "copies", source)) {
    const auto bytes = number<uint64_t>(c, "bytes", source);
    (member(c, "pinned", source) == true ? p.pinned_bytes : p.pageable_bytes) += bytes;
  }
  for (const json& g : member(j, "host_gaps", source))
    p.gaps.push_back({interval(g, source), member(g, "data_wait", source) == true});
  for (const json& k : member(j, "gpu_kernels", source))
    p.gpu_kernels.push_back(interval(k, source));
  if (p.kernels < 2 || static_cast<int64_t>(p.gpu_kernels.size()) != p.kernels ||
      static_cast<int64_t>(p.gaps.size()) != p.kernels - 1) {
    throw InputError(fmt::format(
        "{}: planted plan is inconsistent ({} kernels, {} kernel times, {} gaps; need >= 2 "
        "kernels and one gap between each)",
        source, p.kernels, p.gpu_kernels.size(), p.gaps.size()));
  }
  return p;
}

PlantedCheck check_planted(const PlantedPlan& plan, const std::vector<GpuEvent>& events,
                           double tolerance) {
  PlantedCheck c;
  std::vector<const GpuEvent*> planted;
  for (const GpuEvent& e : events) {
    if (e.kind == GpuEventKind::kernel && e.name == plan.kernel_name) planted.push_back(&e);
  }
  if (static_cast<int64_t>(planted.size()) != plan.kernels) {
    c.failures.push_back(fmt::format("found {} '{}' kernels in the events, the plan launched {}",
                                     planted.size(), plan.kernel_name, plan.kernels));
    return c;
  }
  int64_t first = planted.front()->start_ns, last = planted.front()->end_ns;
  for (const GpuEvent* e : planted) {
    first = std::min(first, e->start_ns);
    last = std::max(last, e->end_ns);
  }
  std::vector<Interval> waits;
  int64_t planted_wait_ns = 0, host_gap_ns = 0;
  for (const PlantedGap& g : plan.gaps) {
    host_gap_ns += g.host.length_ns();
    if (!g.data_wait) continue;
    waits.push_back(g.host);
    planted_wait_ns += g.host.length_ns();
  }
  int64_t gpu_timer_idle_ns = 0;
  for (size_t i = 1; i < plan.gpu_kernels.size(); ++i)
    gpu_timer_idle_ns += plan.gpu_kernels[i].start_ns - plan.gpu_kernels[i - 1].end_ns;

  c.window_summary = summarize_gpu(events, {{first, last}}, waits);
  const GpuSummary& s = c.window_summary;
  c.figures.push_back(figure("idle", (plan.kernels - 1) * plan.gap_ns, s.idle_ns, tolerance, true));
  c.figures.push_back(
      figure("data-wait idle", planted_wait_ns, s.data_wait_idle_ns, tolerance, true));
  c.figures.push_back(figure("idle vs GPU timer", gpu_timer_idle_ns, s.idle_ns, tolerance, false));
  c.figures.push_back(figure("idle vs host gaps", host_gap_ns, s.idle_ns, tolerance, false));
  for (const PlantedFigure& f : c.figures) {
    if (f.gated && !f.ok) {
      c.failures.push_back(
          fmt::format("{}: measured {:.3f} ms vs planted {:.3f} ms ({:.2f} % > {:.2f} %)", f.name,
                      f.measured_ms, f.planted_ms, 100 * f.relative_error, 100 * tolerance));
    }
  }
  for (const bool pinned : {true, false}) {
    const uint64_t want = pinned ? plan.pinned_bytes : plan.pageable_bytes;
    const uint64_t got = h2d_bytes_before(events, pinned, first);
    // At least: the runtime may add small copies of its own; fewer bytes means lost records.
    if (got < want) {
      c.failures.push_back(fmt::format("{} H2D bytes before the schedule: {} recorded, {} planted",
                                       pinned ? "pinned" : "pageable", got, want));
    }
  }
  return c;
}

}  // namespace mmprof::gpu
