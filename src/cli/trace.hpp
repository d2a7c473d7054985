#pragma once
// `mmprof trace`: `mmprof baseline` with event tracing (same options, same run directory, plus
// trace.json for ui.perfetto.dev; see docs/trace.md).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/baseline.hpp"

namespace mmprof::cli {

void setup_trace(CLI::App& app, BaselineCliOptions& options);
int run_trace_command(const BaselineCliOptions& options, const std::vector<std::string>& argv);

}  // namespace mmprof::cli
