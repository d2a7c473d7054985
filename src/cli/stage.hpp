#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.hpp"
#include "data/stage.hpp"

namespace mmprof::cli {

struct StageCliOptions {
  std::string source;
  std::string layout = "auto";  // of the source: auto | files | tar
  StageOptions stage;
  bool json = false;  // --json: stage.json on stdout, nothing else there
  session::Verbosity verbosity;
};

void setup_stage(CLI::App& app, StageCliOptions& options);
int run_stage_command(StageCliOptions options);

}  // namespace mmprof::cli
