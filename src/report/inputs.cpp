#include "report/inputs.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "mmprof/error.hpp"

namespace mmprof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const fs::path& path, const std::string& schema) {
  json j;
  try {
    j = json::parse(read_text(path));
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{} is not valid JSON ({})", path.string(), e.what()));
  }
  if (!j.is_object() || j.value("schema", "") != schema) {
    throw InputError(fmt::format("{} is not an {} file (schema '{}')", path.string(), schema,
                                 j.is_object() ? j.value("schema", "") : ""));
  }
  return j;
}

std::vector<json> read_jsonl(const fs::path& path) {
  std::vector<json> lines;
  if (!fs::exists(path)) return lines;
  std::istringstream in(read_text(path));
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    try {
      lines.push_back(json::parse(line));
    } catch (const json::parse_error&) {
      throw InputError(fmt::format("{} line {} is not valid JSON", path.string(), number));
    }
  }
  return lines;
}

bool is_run(const fs::path& dir) {
  return fs::exists(dir / "summary.json") && fs::exists(dir / "manifest.json");
}

}  // namespace

InputKind input_kind(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw InputError(fmt::format("{} is not a directory", dir.string()));
  if (fs::exists(dir / "experiment.json")) return InputKind::experiment;
  if (is_run(dir)) return InputKind::run;
  throw InputError(fmt::format(
      "{} is neither a run directory (summary.json + manifest.json, from mmprof baseline) nor an "
      "experiment directory (experiment.json, from mmprof ab)",
      dir.string()));
}

RunData load_run(const fs::path& dir) {
  RunData r;
  r.dir = dir;
  r.manifest = read_json(dir / "manifest.json", "mmprof.manifest/1");
  r.summary = read_json(dir / "summary.json", "mmprof.summary/1");
  r.steps = read_csv(dir / "steps.csv");
  r.stages = read_csv(dir / "stages.csv");
  if (fs::exists(dir / "resources.csv")) r.resources = read_csv(dir / "resources.csv");
  r.errors = read_jsonl(dir / "errors.jsonl");
  return r;
}

ExperimentData load_experiment(const fs::path& dir) {
  ExperimentData e;
  e.dir = dir;
  e.experiment = read_json(dir / "experiment.json", "mmprof.experiment/1");
  for (const auto& t : e.experiment.value("trials", json::array())) {
    if (t.value("arm", "") != "base" || t.value("status", "") != "complete") continue;
    const fs::path run = dir / t.value("run_dir", "");
    if (is_run(run)) {
      e.base = load_run(run);
      break;
    }
  }
  return e;
}

fs::path latest_input(const fs::path& root) {
  std::optional<fs::path> best;
  fs::file_time_type best_time;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path& p = entry.path();
    const bool usable = fs::exists(p / "experiment.json") || is_run(p);
    if (!entry.is_directory() || !usable) continue;
    const auto t = fs::last_write_time(p, ec);
    if (!best || t > best_time) {
      best = p;
      best_time = t;
    }
  }
  if (!best) {
    throw InputError(fmt::format(
        "no run or experiment directory under {}/: pass one (mmprof report DIR), or make one "
        "with mmprof baseline or mmprof ab",
        root.string()));
  }
  return *best;
}

}  // namespace mmprof::report
