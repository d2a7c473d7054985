#include "report/placement.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "report/json_access.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A trial's summary; none when its run directory has none (a damaged one is refused, named).
std::optional<Summary> trial_summary(const fs::path& run) {
  if (!RunDir::is_run(run)) return std::nullopt;
  const RunDir r = RunDir::open(run);
  return r.has_summary() ? std::optional(r.summary()) : std::nullopt;
}

// The cores the loader's processes used in the summary's placement phase, by role; empty when
// the summary has no per-process figures (not measured, not 0).
std::map<std::string, double> loader_cores(const Summary& summary, const std::string& phase) {
  std::map<std::string, double> by;
  const CpuWindow* window = summary.cpu.phase(phase);
  if (window == nullptr || window->per_process.empty()) return by;
  by["main"] = by["worker"] = 0;
  for (const ProcessCpu& p : window->per_process)
    if ((p.role == "main" || p.role == "worker") && p.cores) by[p.role] += *p.cores;
  return by;
}

// Per figure, the values of an arm's complete trials.
struct ArmSeries {
  std::map<std::string, std::vector<double>> values;
  std::string where;
  int trials = 0;
  void add(const std::string& name, const json& v) {
    if (v.is_number()) values[name].push_back(v.get<double>());
  }
  void add(const std::string& name, const std::optional<double>& v) {
    if (v) values[name].push_back(*v);
  }
  json median_of(const std::string& name) const {
    const auto it = values.find(name);
    return it == values.end() || it->second.empty() ? json() : json(median(it->second));
  }
};

ArmSeries arm_series(const json& experiment, const fs::path& dir, const std::string& arm) {
  ArmSeries s;
  for (const auto& t : value_at(experiment, "/trials")) {
    if (t.value("arm", "") != arm || t.value("status", "") != "complete") continue;
    const std::optional<Summary> summary = trial_summary(dir / t.value("run_dir", ""));
    if (!summary || !summary->decode_placement) continue;
    const DecodePlacement& placement = *summary->decode_placement;
    ++s.trials;
    if (!placement.where.empty()) s.where = placement.where;
    const auto cores =
        loader_cores(*summary, placement.phase.empty() ? "pipeline" : placement.phase);
    if (!cores.empty()) {
      s.add("worker_cores", json(cores.at("worker")));
      s.add("main_cores", json(cores.at("main")));
      s.add("loader_cores", json(cores.at("worker") + cores.at("main")));
    }
    s.add("samples_per_s", t.value("metric", json()));
    s.add("device_decode_ms_p50", placement.device_decode_ms.p50);
    s.add("cpu_fallbacks", std::optional(static_cast<double>(placement.cpu_fallbacks)));
    const NvmlFigures nvml = placement.nvml.value_or(NvmlFigures{});
    s.add("decoder_util_pct", nvml.decoder_util_pct);
    s.add("jpeg_util_pct", nvml.jpeg_util_pct);
    s.add("sm_util_pct", nvml.sm_util_pct);
    s.add("process_gpu_memory_mib", nvml.process_memory_mib);
    s.add("compute_inflation_pct", placement.compute_inflation.pct);
  }
  return s;
}

json arm_row(const ArmSeries& s, const std::string& arm, const json& value) {
  json row = {{"arm", arm}, {"value", value}, {"where", s.where}, {"trials", s.trials}};
  for (const char* name :
       {"samples_per_s", "worker_cores", "main_cores", "loader_cores", "device_decode_ms_p50",
        "cpu_fallbacks", "decoder_util_pct", "jpeg_util_pct", "sm_util_pct",
        "process_gpu_memory_mib", "compute_inflation_pct"}) {
    row[name] = s.median_of(name);
  }
  return row;
}

}  // namespace

bool is_placement_key(const std::string& key) {
  return key == "decode.device" || key == "image.decode_device" || key == "video.decode_device" ||
         key == "decode.gpu_backend";
}

json decode_placement(const json& experiment, const fs::path& dir) {
  json arms = json::array();
  for (const auto& r : value_at(experiment, "/results")) {
    const json factor = r.value("factor", json());
    if (!factor.is_string() || !is_placement_key(factor.get<std::string>()) ||
        r.value("role", "") != "factor")
      continue;
    if (arms.empty()) arms.push_back(arm_row(arm_series(experiment, dir, "base"), "base", "base"));
    const std::string id = r.value("arm", "");
    json row = arm_row(arm_series(experiment, dir, id), id, r.value("value", json()));
    const json& base = arms[0];
    row["cores_freed"] =
        base["loader_cores"].is_number() && row["loader_cores"].is_number()
            ? json(base["loader_cores"].get<double>() - row["loader_cores"].get<double>())
            : json();
    row["verdict"] = r.value("verdict", json());
    row["effect_pct"] = r.value("effect_pct", json());
    arms.push_back(std::move(row));
  }
  return arms.empty() ? json(nullptr) : json({{"arms", arms}});
}

}  // namespace mmprof::report
