#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "mmprof/baseline.hpp"

namespace mmprof::cli {

struct BaselineCliOptions {
  RunOptions run;
  bool json = false;   // print summary.json instead of the human summary
  std::string resume;  // --resume RUN: continue that interrupted run (a new run directory)
  // A user's own job after `--` (docs/architecture.md): run and observed instead of mmprof's
  // loader.
  std::vector<std::string> command;
  std::optional<int> steps, warmup_steps;  // also phases.steps / phases.warmup_steps
  std::optional<double> duration_s;        // a job: measured seconds, then it is stopped
  std::string loader;                      // a job: which DataLoader to follow
  std::vector<std::string> env;            // a job: NAME=VALUE added to its environment
  std::string like;  // --like RUN: mmprof's loader configured to mimic the job measured in RUN
  std::optional<int> nproc_per_node;  // start N ranks on this host (cli/ranks.hpp)
};

void setup_baseline(CLI::App& app, BaselineCliOptions& options);
// Makes one measured run and writes its run directory: run_baseline, or a variant of it such as
// run_traced_baseline.
using BaselineRunner = nlohmann::json (*)(const Config&, const Dataset&, const BaselineOptions&);
// `mmprof baseline`, and every command that is a baseline run plus something (`mmprof trace`):
// `command` names the default run directory, `runner` makes the run.
int run_baseline_command(const BaselineCliOptions& options, const std::vector<std::string>& argv,
                         const std::string& command = "baseline",
                         BaselineRunner runner = run_baseline);

}  // namespace mmprof::cli
