#include "report/series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "stats/descriptive.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

template <class Row, class F>
std::vector<double> values_of(const std::vector<Row>& rows, const std::string& phase, F&& value) {
  std::vector<double> out;
  for (const Row& r : rows)
    if (r.phase == phase) out.push_back(value(r));
  return out;
}

double step_value(const StepRow& r, StepFigure f) {
  return f == StepFigure::wait ? r.wait_ms : r.step_ms;
}

std::optional<double> stage_value(const StageRow& r, StageFigure f) {
  switch (f) {
    case StageFigure::read:
      return r.read_ms;
    case StageFigure::decode:
      return r.decode_ms;
    case StageFigure::augment:
      return r.augment_ms;
    case StageFigure::getitem:
      return r.getitem_ms;
  }
  return std::nullopt;
}

json optional_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// read + decode + augment where mmprof's loader timed them, else the whole __getitem__ (a
// user's own job); nullopt when the row has neither.
std::optional<double> sample_total_ms(const StageRow& r) {
  if (!r.read_ms && !r.decode_ms && !r.augment_ms) return r.getitem_ms;
  return r.read_ms.value_or(0) + r.decode_ms.value_or(0) + r.augment_ms.value_or(0);
}

}  // namespace

const char* column_name(StepFigure f) noexcept {
  return f == StepFigure::wait ? "wait_ms" : "step_ms";
}

json latency_cdf(const std::vector<StepRow>& steps, const std::string& phase, StepFigure figure) {
  std::vector<double> values =
      values_of(steps, phase, [&](const StepRow& r) { return step_value(r, figure); });
  json points = json::array();
  if (values.empty()) return points;
  std::sort(values.begin(), values.end());
  // Every 5 % to p85, then nine points per decade of the tail (p90, p91 .. p98, p99, p99.1 ..)
  // while the sample resolves them (q <= 1 - 1/n), then the maximum.
  std::vector<double> qs;
  qs.reserve(18 + 9 * 8);  // to p85, then up to 8 decades (p99.999999)
  for (int i = 0; i < 18; ++i)
    qs.push_back(i / 20.0);
  const double resolved = 1 - 1.0 / static_cast<double>(values.size());
  for (int k = 1; 1 - std::pow(10.0, -k) <= resolved + 1e-12; ++k) {
    const double decade = std::pow(10.0, -k);
    for (int j = 0; j < 9 && 1 - decade * (1 - j / 10.0) <= resolved + 1e-12; ++j)
      qs.push_back(1 - decade * (1 - j / 10.0));
  }
  for (const double q : qs)
    points.push_back({quantile_sorted(values, q), q});
  points.push_back({values.back(), 1.0});
  return points;
}

json memory_series(const std::vector<ResourceRow>& rows, size_t max_points) {
  struct Process {
    std::string label;
    std::vector<std::pair<double, double>> points;
    json phases = json::array();  // [{phase, from_s}] in the order the process was sampled in them
  };
  // PSS needs smaps_rollup, which the sampler reads less often than RSS: a process's line is its
  // PSS samples alone, or its RSS where it has none (never the two mixed, which would zigzag).
  std::set<int> with_pss;
  for (const ResourceRow& r : rows)
    if (r.pss_kb) with_pss.insert(r.pid);
  std::map<int, Process> processes;  // by pid: one line per process
  std::vector<int> order;
  std::optional<int64_t> t0;
  for (const ResourceRow& r : rows) {
    const bool pss = with_pss.contains(r.pid);
    const std::optional<int64_t> kb = pss ? r.pss_kb : r.rss_kb;
    if (!kb) continue;
    if (!t0) t0 = r.t_ns;
    auto [it, fresh] = processes.try_emplace(r.pid);
    if (fresh) {
      std::string role = r.role;
      if (r.worker) role += fmt::format(" {}", *r.worker);
      it->second.label = fmt::format("{} (pid {}){}", role, r.pid, pss ? "" : ", RSS");
      order.push_back(r.pid);
    }
    const double t = static_cast<double>(r.t_ns - *t0) / 1e9;
    json& phases = it->second.phases;
    if (!r.phase.empty() && (phases.empty() || phases.back()["phase"] != r.phase))
      phases.push_back({{"phase", r.phase}, {"from_s", t}});
    it->second.points.emplace_back(t, static_cast<double>(*kb) / 1024.0);
  }
  json out = json::array();
  for (const int pid : order) {
    const auto& pts = processes[pid].points;
    const size_t stride = std::max<size_t>(1, (pts.size() + max_points - 1) / max_points);
    json points = json::array();
    for (size_t i = 0; i < pts.size(); i += stride)
      points.push_back({pts[i].first, pts[i].second});
    if ((pts.size() - 1) % stride != 0) points.push_back({pts.back().first, pts.back().second});
    out.push_back(
        {{"process", processes[pid].label}, {"phases", processes[pid].phases}, {"points", points}});
  }
  return out;
}

json slowest_samples(const std::vector<StageRow>& stages, const std::string& phase, size_t n) {
  std::vector<json> rows;
  for (const StageRow& r : stages) {
    const std::optional<double> total = sample_total_ms(r);
    if (r.phase != phase || !total) continue;
    json row = {{"key", r.key},
                {"worker", std::to_string(r.worker)},
                {"modality", r.modality},
                {"read_ms", optional_json(r.read_ms)},
                {"decode_ms", optional_json(r.decode_ms)},
                {"augment_ms", optional_json(r.augment_ms)},
                {"total_ms", *total}};
    if (r.getitem_ms) row["getitem_ms"] = *r.getitem_ms;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return a["total_ms"].get<double>() > b["total_ms"].get<double>();
  });
  rows.resize(std::min(rows.size(), n));
  return rows;
}

std::optional<double> stage_mean(const std::vector<StageRow>& stages, const std::string& phase,
                                 StageFigure figure) {
  std::vector<double> values;
  for (const StageRow& r : stages) {
    const std::optional<double> v = stage_value(r, figure);
    if (r.phase == phase && v) values.push_back(*v);
  }
  if (values.empty()) return std::nullopt;
  return mean(values);
}

std::optional<double> stall_from_steps(const std::vector<StepRow>& steps,
                                       const std::string& phase) {
  double w = 0, s = 0;
  size_t n = 0;
  for (const StepRow& r : steps) {
    if (r.phase != phase) continue;
    w += r.wait_ms;
    s += r.step_ms;
    ++n;
  }
  if (n == 0 || s <= 0) return std::nullopt;
  return w / s;
}

}  // namespace mmprof::report
