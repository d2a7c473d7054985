#include "report/series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>
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
    std::string role;
    std::optional<int> worker;
    std::vector<std::pair<double, double>> rss, pss;
    json phases = json::array();  // [{phase, from_s}] in the order the process was sampled in them
  };
  std::map<int, Process> processes;  // by pid: one line per process
  std::vector<int> order;
  std::optional<int64_t> t0;
  for (const ResourceRow& r : rows) {
    if (!r.rss_kb && !r.pss_kb) continue;
    if (!t0) t0 = r.t_ns;
    auto [it, fresh] = processes.try_emplace(r.pid);
    Process& p = it->second;
    if (fresh) order.push_back(r.pid);
    // "external" is a job's process before the hook names it (its main, a worker).
    if (p.role.empty() || r.role != "external") p.role = r.role;
    if (r.worker) p.worker = r.worker;
    const double t = static_cast<double>(r.t_ns - *t0) / 1e9;
    if (!r.phase.empty() && (p.phases.empty() || p.phases.back()["phase"] != r.phase))
      p.phases.push_back({{"phase", r.phase}, {"from_s", t}});
    // A live process has pages: RSS 0 is a process that has exited (a zombie), not a size.
    if (r.rss_kb && *r.rss_kb > 0) p.rss.emplace_back(t, static_cast<double>(*r.rss_kb) / 1024.0);
    if (r.pss_kb) p.pss.emplace_back(t, static_cast<double>(*r.pss_kb) / 1024.0);
  }
  const auto points = [&](const std::vector<std::pair<double, double>>& pts) {
    json out = json::array();
    if (pts.empty()) return out;
    const size_t stride = std::max<size_t>(1, (pts.size() + max_points - 1) / max_points);
    for (size_t i = 0; i < pts.size(); i += stride)
      out.push_back({pts[i].first, pts[i].second});
    if ((pts.size() - 1) % stride != 0) out.push_back({pts.back().first, pts.back().second});
    return out;
  };
  json out = json::array();
  bool observer_seen = false;  // the first observer sampled is mmprof itself (the tree's root)
  for (const int pid : order) {
    const Process& p = processes[pid];
    std::string name = p.role;
    if (p.role == "worker" && p.worker) name = fmt::format("worker {}", *p.worker);
    if (p.role == "external") name = "job process";
    if (p.role == "observer")
      name = std::exchange(observer_seen, true) ? "mmprof helper" : "mmprof";
    out.push_back({{"process", fmt::format("{} (pid {})", name, pid)},
                   {"phases", p.phases},
                   {"points", points(p.rss)},
                   {"pss", points(p.pss)}});
  }
  return out;
}

json step_breakdown(const std::vector<StepRow>& steps, const std::string& phase,
                    size_t max_columns) {
  std::vector<const StepRow*> rows;
  for (const StepRow& r : steps)
    if (r.phase == phase) rows.push_back(&r);
  if (rows.empty()) return nullptr;
  const auto parts_of = [](const StepRow& r) {
    const double h2d = r.h2d_ms.value_or(0), sync = r.sync_ms.value_or(0);
    return std::array<double, 5>{r.wait_ms, h2d, r.compute_ms, sync,
                                 std::max(0.0, r.step_ms - r.wait_ms - h2d - r.compute_ms - sync)};
  };
  static constexpr std::array<const char*, 5> kParts = {"wait", "h2d", "compute", "sync", "other"};
  std::array<bool, 5> used{};
  for (const StepRow* r : rows) {
    const auto v = parts_of(*r);
    for (size_t k = 0; k < v.size(); ++k)
      used[k] = used[k] || v[k] > 1e-6;
  }
  json parts = json::array();
  for (size_t k = 0; k < kParts.size(); ++k)
    if (used[k]) parts.push_back(kParts[k]);
  json columns = json::array();
  const size_t per = (rows.size() + max_columns - 1) / max_columns;
  for (size_t at = 0; at < rows.size(); at += per) {
    const size_t end = std::min(rows.size(), at + per);
    std::array<double, 5> sum{};
    for (size_t i = at; i < end; ++i) {
      const auto v = parts_of(*rows[i]);
      for (size_t k = 0; k < v.size(); ++k)
        sum[k] += v[k];
    }
    json ms = json::array();
    for (size_t k = 0; k < kParts.size(); ++k)
      if (used[k]) ms.push_back(sum[k] / static_cast<double>(end - at));
    columns.push_back(
        {{"first_step", rows[at]->step}, {"last_step", rows[end - 1]->step}, {"ms", ms}});
  }
  return {{"phase", phase}, {"parts", parts}, {"columns", columns}};
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
