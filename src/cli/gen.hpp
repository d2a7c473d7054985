#pragma once
#include <CLI/CLI.hpp>

#include "gen/generator.hpp"

namespace mmprof::cli {

struct GenCliOptions {
  GenOptions gen;
  std::string layout = "files";  // files | tar | both
  double shard_mb = 64;
};

void setup_gen(CLI::App& app, GenCliOptions& options);
int run_gen_command(GenCliOptions options);

}  // namespace mmprof::cli
