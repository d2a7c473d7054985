#pragma once
#include <CLI/CLI.hpp>

#include "cli/common.hpp"
#include "gen/generator.hpp"

namespace mmprof::cli {

struct GenCliOptions {
  GenOptions gen;
  std::string layout = "files";  // files | tar | both
  double shard_mb = 64;
  std::string video_codec = "h264";  // h264 | vp9 | mpeg4
  std::string image_size;  // --image-size WxH: fixed bounds, empty = the long-tailed default
  bool json = false;       // --json: dataset.json on stdout, nothing else there
  bool force = false;      // --force: replace an --out that holds a dataset mmprof generated
  session::Verbosity verbosity;
};

void setup_gen(CLI::App& app, GenCliOptions& options);
int run_gen_command(GenCliOptions options);

}  // namespace mmprof::cli
