#pragma once
// `mmprof inspect`: the inventory alone (provenance, software, hardware, storage, network, data
// mix) as readable tables, and as JSON ("mmprof.inventory/2") to --out or stdout.
// `mmprof inspect FILE`: describes a file mmprof wrote (a GPU events file).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace mmprof::cli {

struct InspectCliOptions {
  session::RunOptions run;  // --config, --data, --set, --repo; run.out is the JSON file here
  bool probe_storage = false;
  bool json = false;
  bool keys = false;  // list the configuration keys instead
  size_t mix_samples = 2000;
  uint64_t seed = 0;
  std::string file;     // a file to describe instead (a GPU events file: cli/inspect_gpu.hpp)
  std::string planted;  // with a GPU events file: the planted plan to check it against
  double tolerance = 0.02;
};

void setup_inspect(CLI::App& app, InspectCliOptions& options);
int run_inspect_command(const InspectCliOptions& options, const std::vector<std::string>& argv);

}  // namespace mmprof::cli
