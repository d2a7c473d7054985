#pragma once
#include <CLI/CLI.hpp>

#include "cli/common.hpp"

namespace mmprof::cli {

struct BaselineCliOptions {
  RunOptions run;
  bool json = false;  // print summary.json instead of the human summary
};

void setup_baseline(CLI::App& app, BaselineCliOptions& options);
int run_baseline_command(const BaselineCliOptions& options, const std::vector<std::string>& argv);

// The compact human summary of a run (pure: summary.json -> text).
std::string format_summary(const nlohmann::json& summary);

}  // namespace mmprof::cli
