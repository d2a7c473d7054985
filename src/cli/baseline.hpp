#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "session/baseline.hpp"

namespace mmprof::cli {

// The options of `mmprof baseline` and `mmprof trace`, declared into the session's request.
using BaselineCliOptions = session::BaselineRequest;

void setup_baseline(CLI::App& app, BaselineCliOptions& options);
// `mmprof baseline`, and every command that is a baseline run plus something (`mmprof trace`):
// `command` names the default run directory, `runner` makes the run (session/baseline);
// prints what it produced.
int run_baseline_command(const BaselineCliOptions& options, const std::vector<std::string>& argv,
                         const std::string& command = "baseline",
                         session::BaselineRunner runner = run_baseline);

}  // namespace mmprof::cli
