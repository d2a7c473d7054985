#pragma once
// What every run-producing subcommand is asked (--config, --data, --set, --out, --repo,
// --max-host-memory, --quiet/--verbose) and its resolution into a Config and a Dataset. The CLI
// declares the options into these structs (cli/common); everything here works without it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/progress.hpp"

namespace mmprof::session {

// --quiet: no progress and no human summary (errors only; the files hold everything).
// --verbose: a plain line per finished phase or trial, on a terminal too.
struct Verbosity {
  bool quiet = false;
  bool verbose = false;
};
// How progress goes to stderr: none under --json or --quiet; a line per phase or trial when
// stderr is not a terminal (a CI log) or under --verbose; else a line redrawn in place.
ProgressStyle progress_style(const Verbosity& v, bool json);

struct RunOptions {
  std::string config_file;
  std::string data;
  std::vector<std::string> sets;
  std::string out;
  bool force = false;  // --force: replace what an earlier mmprof wrote into --out
  std::string repo;    // the user's repository for provenance (empty: the working directory)
  std::string max_host_memory;  // refuse configurations reserving more ("16G"); empty: no limit
  Verbosity verbosity;          // --quiet, --verbose
};

struct ResolvedRun {
  nlohmann::json tree;
  Config config;
};

// Config file (or configs/default.yaml semantics: the built-in defaults), then --data, then --set;
// then --max-host-memory is checked against the loader's reservation (UsageError with the sums).
ResolvedRun resolve_run(const RunOptions& options);
// --max-host-memory (empty: no limit) against the loader's reservation; UsageError with the sums.
void check_max_host_memory(const Config& config, const std::string& max_host_memory);

// Opens the configured dataset; data.path null means the embedded default (generated on first use).
Dataset open_dataset(const Config& config);
// A dataset folder with its layout as the user wrote it (auto | files | tar), for shard and stage.
Dataset open_source(const std::string& source, const std::string& layout);

// runs/<command>-<UTC timestamp>-<pid>, the output directory when --out was not given.
std::string default_out_dir(const std::string& command);

}  // namespace mmprof::session
