#include "report/series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "stats/descriptive.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

std::vector<double> column_values(const CsvTable& t, const std::string& phase, size_t col) {
  const size_t phase_col = t.require("phase");
  std::vector<double> values;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t.row(r)[phase_col] != phase) continue;
    if (const auto v = t.number(r, col)) values.push_back(*v);
  }
  return values;
}

}  // namespace

json latency_cdf(const CsvTable& steps, const std::string& phase, const std::string& column) {
  std::vector<double> values = column_values(steps, phase, steps.require(column));
  json points = json::array();
  if (values.empty()) return points;
  std::sort(values.begin(), values.end());
  for (int i = 0; i <= 100; ++i)
    points.push_back({quantile_sorted(values, i / 100.0), i / 100.0});
  return points;
}

json memory_series(const CsvTable& t, size_t max_points) {
  const size_t t_col = t.require("t_ns"), pid_col = t.require("pid"), role_col = t.require("role");
  const size_t pss_col = t.require("pss_kb"), rss_col = t.require("rss_kb");
  const auto worker_col = t.column("worker");
  struct Process {
    std::string label;
    std::vector<std::pair<double, double>> points;
  };
  std::map<std::string, Process> processes;  // by pid: one line per process
  std::vector<std::string> order;
  std::optional<double> t0;
  for (size_t r = 0; r < t.size(); ++r) {
    const auto ns = t.number(r, t_col);
    auto kb = t.number(r, pss_col);
    if (!kb) kb = t.number(r, rss_col);  // PSS needs smaps_rollup; RSS otherwise
    if (!ns || !kb) continue;
    if (!t0) t0 = *ns;
    const std::string& pid = t.row(r)[pid_col];
    auto [it, fresh] = processes.try_emplace(pid);
    if (fresh) {
      std::string role = t.row(r)[role_col];
      if (worker_col && !t.row(r)[*worker_col].empty()) role += " " + t.row(r)[*worker_col];
      it->second.label = fmt::format("{} (pid {})", role, pid);
      order.push_back(pid);
    }
    it->second.points.emplace_back((*ns - *t0) / 1e9, *kb / 1024.0);
  }
  json out = json::array();
  for (const auto& pid : order) {
    const auto& pts = processes[pid].points;
    const size_t stride = std::max<size_t>(1, (pts.size() + max_points - 1) / max_points);
    json points = json::array();
    for (size_t i = 0; i < pts.size(); i += stride)
      points.push_back({pts[i].first, pts[i].second});
    if ((pts.size() - 1) % stride != 0) points.push_back({pts.back().first, pts.back().second});
    out.push_back({{"process", processes[pid].label}, {"points", points}});
  }
  return out;
}

json slowest_samples(const CsvTable& t, const std::string& phase, size_t n) {
  const size_t phase_col = t.require("phase"), key_col = t.require("key");
  const size_t read = t.require("read_ms"), decode = t.require("decode_ms");
  const size_t augment = t.require("augment_ms");
  const auto worker = t.column("worker"), modality = t.column("modality");
  std::vector<json> rows;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t.row(r)[phase_col] != phase) continue;
    const double rd = t.number(r, read).value_or(0), de = t.number(r, decode).value_or(0);
    const double au = t.number(r, augment).value_or(0);
    rows.push_back({{"key", t.row(r)[key_col]},
                    {"worker", worker ? t.row(r)[*worker] : ""},
                    {"modality", modality ? t.row(r)[*modality] : ""},
                    {"read_ms", rd},
                    {"decode_ms", de},
                    {"augment_ms", au},
                    {"total_ms", rd + de + au}});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return a["total_ms"].get<double>() > b["total_ms"].get<double>();
  });
  rows.resize(std::min(rows.size(), n));
  return rows;
}

std::optional<double> column_mean(const CsvTable& t, const std::string& phase,
                                  const std::string& column) {
  const auto values = column_values(t, phase, t.require(column));
  if (values.empty()) return std::nullopt;
  return mean(values);
}

std::optional<double> stall_from_steps(const CsvTable& steps, const std::string& phase) {
  const auto wait = column_values(steps, phase, steps.require("wait_ms"));
  const auto step = column_values(steps, phase, steps.require("step_ms"));
  double w = 0, s = 0;
  for (double v : wait)
    w += v;
  for (double v : step)
    s += v;
  if (step.empty() || s <= 0) return std::nullopt;
  return w / s;
}

}  // namespace mmprof::report
