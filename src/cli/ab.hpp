#pragma once
// `mmprof ab`: one-factor-at-a-time experiments (docs/experiment.md).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ab/design.hpp"
#include "cli/common.hpp"

namespace mmprof::cli {

struct AbCliOptions {
  RunOptions run;  // --config, --data, --set (the base), --out, --repo
  std::string experiment_file;
  std::vector<std::string> factors, preserving;
  std::optional<int> rounds;
  std::optional<uint64_t> seed;
  std::optional<std::string> cache;
  std::optional<double> warmup_s;
  std::vector<std::string> command;  // a user's own job, after --
  bool json = false;                 // --json: experiment.json on stdout, nothing else there
};

void setup_ab(CLI::App& app, AbCliOptions& options);

// The experiment a command line asks for: the experiment file (or, with no factor and no file,
// the embedded default experiment), then the command line's options on top. Pure.
ExperimentSpec experiment_spec(const AbCliOptions& options);

int run_ab_command(const AbCliOptions& options, const std::vector<std::string>& argv);

}  // namespace mmprof::cli
