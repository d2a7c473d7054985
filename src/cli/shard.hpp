#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.hpp"
#include "gen/reshard.hpp"

namespace mmprof::cli {

struct ShardCliOptions {
  std::string source;
  std::string layout = "auto";  // of the source: auto | files | tar
  gen::ReshardOptions reshard;
  double shard_mb = 64;
  bool by_size = false;  // the default; the flag says so explicitly
  bool by_count = false;
  bool json = false;  // --json: shards.json on stdout, nothing else there
  session::Verbosity verbosity;
};

void setup_shard(CLI::App& app, ShardCliOptions& options);
int run_shard_command(ShardCliOptions options);

}  // namespace mmprof::cli
