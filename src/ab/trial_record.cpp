#include "ab/trial_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "mmprof/error.hpp"
#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

double number_at(const nlohmann::json& j, const std::string& pointer) {
  const auto p = nlohmann::json::json_pointer(pointer);
  return j.contains(p) && j[p].is_number() ? j[p].get<double>() : NAN;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string field; std::getline(ss, field, ',');)
    out.push_back(field);
  return out;
}

// step_ms and wait_ms of `phase`'s rows of steps.csv, located by the header's column names.
void read_step_tails(const std::filesystem::path& steps_csv, const std::string& phase,
                     TrialRecord& t) {
  std::ifstream in(steps_csv);
  std::string line;
  if (!std::getline(in, line)) return;
  const auto header = split_csv_line(line);
  const auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t c_phase = column("phase"), c_step = column("step_ms"), c_wait = column("wait_ms");
  const size_t needed = std::max({c_phase, c_step, c_wait});
  if (needed >= header.size()) return;
  std::vector<double> step, wait;
  for (size_t row = 2; std::getline(in, line); ++row) {
    const auto f = split_csv_line(line);
    if (f.size() <= needed || f[c_phase] != phase) continue;
    try {
      step.push_back(std::stod(f[c_step]));
      wait.push_back(std::stod(f[c_wait]));
    } catch (const std::logic_error&) {
      throw InputError(
          fmt::format("{} line {}: step_ms or wait_ms is not a number", steps_csv.string(), row));
    }
  }
  std::sort(step.begin(), step.end());
  std::sort(wait.begin(), wait.end());
  t.step_p95 = quantile_sorted(step, 0.95);
  t.step_p99 = quantile_sorted(step, 0.99);
  t.wait_p95 = quantile_sorted(wait, 0.95);
  t.wait_p99 = quantile_sorted(wait, 0.99);
}

std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a trial killed mid-write leaves no valid file: treated as missing
  }
}

}  // namespace

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

MetricChoice choose_metric(const Config& base) {
  if (base.step.kind == StepKind::none) {
    return {"pipeline", "throughput.pipeline.samples_per_s",
            "step.kind is none: the loader alone is what is measured"};
  }
  return {"end_to_end", "throughput.end_to_end.samples_per_s",
          fmt::format("step.kind is {}: end-to-end samples/s is what training sees",
                      to_string(base.step.kind))};
}

nlohmann::json to_json(const MetricChoice& m) {
  return {{"key", m.key}, {"phase", m.phase}, {"why", m.why}, {"unit", "samples/s"}};
}

void read_trial_outputs(const std::filesystem::path& run_dir, const MetricChoice& metric,
                        TrialRecord& t) {
  if (const auto summary = read_json(run_dir / "summary.json")) {
    const double v = number_at(*summary, "/throughput/" + metric.phase + "/samples_per_s");
    if (std::isfinite(v) && v > 0) t.metric = v;
    t.pss_peak_mb = number_at(*summary, "/memory/total_pss_peak_mb");
    t.host_peak_mb = number_at(*summary, "/memory/host_peak_mb");
    const double errors = number_at(*summary, "/errors/count");
    t.errors = std::isfinite(errors) ? static_cast<int64_t>(errors) : 0;
  }
  if (const auto steady = read_json(run_dir / "steady.json")) {
    if (steady->contains(metric.phase)) {
      t.steady = (*steady)[metric.phase]["steady"].get<bool>();
      t.steady_extended = (*steady)[metric.phase]["extended"].get<bool>();
    }
  }
  read_step_tails(run_dir / "steps.csv", metric.phase, t);
  t.digests = read_digests(run_dir);
}

nlohmann::json to_json(const TrialRecord& t, const std::string& arm_id) {
  const auto opt_bool = [](const std::optional<bool>& b) {
    return b ? nlohmann::json(*b) : nlohmann::json();
  };
  return {{"round", t.round},
          {"position", t.position},
          {"arm", arm_id},
          {"run_dir", t.run_dir},
          {"status", t.status},
          {"exit_code", t.exit_code},
          {"wall_s", t.wall_s},
          {"metric", t.metric ? nlohmann::json(*t.metric) : nlohmann::json()},
          {"steady", opt_bool(t.steady)},
          {"steady_extended", opt_bool(t.steady_extended)},
          {"latency_ms",
           {{"step_p95", finite_or_null(t.step_p95)},
            {"step_p99", finite_or_null(t.step_p99)},
            {"wait_p95", finite_or_null(t.wait_p95)},
            {"wait_p99", finite_or_null(t.wait_p99)}}},
          {"pss_peak_mb", finite_or_null(t.pss_peak_mb)},
          {"host_peak_mb", finite_or_null(t.host_peak_mb)},
          {"errors", t.errors}};
}

}  // namespace mmprof
