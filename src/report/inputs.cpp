#include "report/inputs.hpp"

#include <fmt/format.h>

#include "mmprof/error.hpp"
#include "rundir/json_file.hpp"

namespace mmprof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_run(const fs::path& dir) {
  return RunDir::is_run(dir) && fs::exists(dir / run_file::summary);
}

bool is_experiment(const fs::path& dir) {
  return fs::exists(dir / run_file::experiment);
}

bool is_job(const fs::path& dir) {
  return fs::exists(dir / run_file::job);
}

// The JSON object of `file`, which must carry `schema` (an older version upgraded).
json read_with_schema(const fs::path& file, const char* schema) {
  json j = rundir::read_json_object(file, "");
  rundir::check_schema(j, schema, file);
  return j;
}

}  // namespace

InputKind input_kind(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw InputError(fmt::format("{} is not a directory", dir.string()));
  if (is_experiment(dir)) return InputKind::experiment;
  if (is_job(dir)) return InputKind::job;
  if (is_run(dir)) return InputKind::run;
  throw InputError(fmt::format(
      "{} is neither a run directory (summary.json + manifest.json, from mmprof baseline), an "
      "experiment directory (experiment.json, from mmprof ab) nor a job directory (job.json, from "
      "mmprof baseline --nproc-per-node)",
      dir.string()));
}

RunData load_run(const fs::path& dir) {
  const RunDir run = RunDir::open(dir);
  RunData r;
  r.dir = dir;
  r.manifest = run.manifest();
  r.summary = run.summary();
  r.steps = run.steps();
  r.stages = run.stages();
  r.resources = run.resources();
  r.errors = run.errors();
  return r;
}

ExperimentData load_experiment(const fs::path& dir) {
  ExperimentData e;
  e.dir = dir;
  e.experiment = read_with_schema(dir / run_file::experiment, run_schema::experiment);
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

JobData load_job(const fs::path& dir) {
  JobData j;
  j.dir = dir;
  j.job = read_with_schema(dir / run_file::job, run_schema::job);
  const json& s = j.job.value("stragglers", json());
  const int rank = s.is_object() ? s["slowest_rank"].get<int>() : 0;
  const fs::path run = dir / fmt::format("rank-{}", rank);
  if (is_run(run)) j.slowest = load_run(run);
  return j;
}

fs::path latest_input(const fs::path& root) {
  std::optional<fs::path> best;
  fs::file_time_type best_time;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path& p = entry.path();
    const bool usable = is_experiment(p) || is_job(p) || is_run(p);
    if (!entry.is_directory() || !usable) continue;
    // When its own file was last written (a run's manifest.json is, at its end), not the
    // folder's: a report written into an older run must not make it the latest.
    const fs::path marker = p / (is_experiment(p) ? run_file::experiment
                                 : is_job(p)      ? run_file::job
                                                  : run_file::manifest);
    const auto t = fs::last_write_time(marker, ec);
    if (ec) continue;
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
