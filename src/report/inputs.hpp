#pragma once
// The report's inputs, read back from disk: run directories (`mmprof baseline`, DESIGN.md) and
// experiment directories (`mmprof ab`, docs/experiment.md). Reading only: report never re-runs.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"

namespace mmprof::report {

struct RunData {
  std::filesystem::path dir;
  nlohmann::json manifest;  // "mmprof.manifest/2"
  Summary summary;          // "mmprof.summary/2"
  std::vector<StepRow> steps;
  std::vector<StageRow> stages;
  std::optional<std::vector<ResourceRow>> resources;  // absent before the procfs sampler
  std::vector<nlohmann::json> errors;
};

struct ExperimentData {
  std::filesystem::path dir;
  nlohmann::json experiment;    // "mmprof.experiment/2"
  std::optional<RunData> base;  // the first complete base trial, analysed like a run
};

// A multi-rank job (mmprof baseline --nproc-per-node, or under torchrun): job.json, merged by
// mmprof (measure/job_summary.hpp), and the slowest rank's run, analysed like a run.
struct JobData {
  std::filesystem::path dir;
  nlohmann::json job;  // "mmprof.job/1"
  std::optional<RunData> slowest;
};

enum class InputKind { run, experiment, job };

// What `dir` holds (experiment.json, job.json, or summary.json + manifest.json); throws
// InputError naming the directory when it is none of them.
InputKind input_kind(const std::filesystem::path& dir);

// Throw InputError naming the file on a missing file, bad JSON or a foreign schema.
RunData load_run(const std::filesystem::path& dir);
ExperimentData load_experiment(const std::filesystem::path& dir);
JobData load_job(const std::filesystem::path& dir);

// The embedded default: the run, experiment or job directory under `root` (runs/) whose own file
// (manifest.json, experiment.json, job.json) was written last, so a report written into an older
// run does not make it the latest; throws InputError saying what to pass when there is none.
std::filesystem::path latest_input(const std::filesystem::path& root);

}  // namespace mmprof::report
