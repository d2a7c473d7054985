#pragma once
// Options every run-producing subcommand shares (--config, --data, --set, --out) and
// their resolution into a Config and a Dataset.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/progress.hpp"

namespace mmprof::cli {

// --quiet: no progress and no human summary (errors only; the files hold everything).
// --verbose: a plain line per finished phase or trial, on a terminal too.
struct Verbosity {
  bool quiet = false;
  bool verbose = false;
};
void add_verbosity_flags(CLI::App& app, Verbosity& v);
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

void add_run_options(CLI::App& app, RunOptions& options);
// --json: `what` ("summary.json") on stdout as the only output there; human text is left out.
void add_json_flag(CLI::App& app, bool& json, const std::string& what);
// `doc` on stdout, indented (the one JSON document of --json).
void print_json(const nlohmann::json& doc);
void add_repo_option(CLI::App& app, std::string& repo);

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

// A positional dataset folder with its --layout (auto | files | tar), for shard and stage.
void add_source_options(CLI::App& app, std::string& source, std::string& layout,
                        const std::string& what);
Dataset open_source(const std::string& source, const std::string& layout);

// runs/<command>-<UTC timestamp> unless --out was given.
std::string default_out_dir(const std::string& command);

}  // namespace mmprof::cli
