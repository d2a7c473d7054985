#pragma once
// `mmprof ab`: one-factor-at-a-time experiments (docs/experiment.md).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "session/experiment.hpp"

namespace mmprof::cli {

// The options of `mmprof ab`, declared into the session's request.
using AbCliOptions = session::ExperimentRequest;

void setup_ab(CLI::App& app, AbCliOptions& options);

// Prepares and runs the experiment (session/experiment), then prints it.
int run_ab_command(const AbCliOptions& options, const std::vector<std::string>& argv);

}  // namespace mmprof::cli
