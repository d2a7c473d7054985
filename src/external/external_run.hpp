#pragma once
// `mmprof baseline -- CMD` (and `trace`): one measured run of the user's own job. The command
// runs as mmprof's child with the zero-code hook (external/hook_env.hpp); mmprof samples the
// whole process tree, follows the hook's records as they are flushed (to name processes, find
// the end of warm-up, stop after --duration), stops the job cleanly (the hook raises
// KeyboardInterrupt in the main thread; then SIGINT to the group, then SIGKILL after a grace
// period), kills what is left, and writes the run directory of docs/architecture.md with
// `source: external`: steps.csv from the job's own DataLoader, stages.csv from its
// __getitem__ calls, resources.csv per role, summary.json with the job's figures.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/progress.hpp"
#include "mmprof/summary.hpp"

namespace mmprof::external {

struct ExternalRunOptions {
  std::filesystem::path out;           // the run directory
  bool force = false;                  // --force: replace a run already in `out`
  std::vector<std::string> argv;       // mmprof's command line, for the manifest
  std::vector<std::string> command;    // the job
  nlohmann::json config_tree;          // the resolved configuration, for the manifest
  Config config;                       // metrics.* (the sampler), trace.*
  nlohmann::json overrides = nullptr;  // DataLoader arguments the hook forces (or null)
  int64_t warmup_steps = 10;           // batches of the followed loader not measured
  std::optional<int64_t> steps;        // measured batches, then the hook stops the job
  std::optional<double> duration_s;    // or: measured seconds, then the job is stopped
  std::string loader;                  // --loader: which DataLoader to follow
  std::vector<std::pair<std::string, std::string>> env;  // more variables for the job
  std::filesystem::path repo;                            // the user's repository (empty: the cwd)
  ProgressStyle progress = ProgressStyle::none;          // the job's batches on stderr
  bool show_job_output = true;  // the job's own lines on stderr ("  | ..."; always in job.log)
  bool trace = false;           // `mmprof trace`: trace.json from the hook's records
  double grace_s = 10;          // how long a stopped job may take to exit
};

// Runs the job and writes the run directory; returns summary.json's content. A job that fails
// (non-zero exit before it was stopped) keeps its run directory with status failed and throws
// RunError; Ctrl-C is forwarded and throws Error(interrupted) after the files are written.
Summary run_external(const ExternalRunOptions& options);

}  // namespace mmprof::external
