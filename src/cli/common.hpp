#pragma once
// The options every run-producing subcommand shares (--config, --data, --set, --out, --repo,
// --max-host-memory, --quiet, --verbose, --json), declared into session/run_options' structs.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "session/run_options.hpp"

namespace mmprof::cli {

void add_verbosity_flags(CLI::App& app, session::Verbosity& v);
void add_run_options(CLI::App& app, session::RunOptions& options);
// --json: `what` ("summary.json") on stdout as the only output there; human text is left out.
void add_json_flag(CLI::App& app, bool& json, const std::string& what);
// `doc` on stdout, indented (the one JSON document of --json).
void print_json(const nlohmann::json& doc);

// The columns human text is wrapped at on stdout: $COLUMNS when set (20 or more), else a
// terminal's width up to 100, else 0 (a pipe or a file: one line per record, whole).
size_t text_width();
// Prints human text on stdout, wrapped at text_width().
void print_text(const std::string& text);
void add_repo_option(CLI::App& app, std::string& repo);

// --steps N and --duration S: how long each run measures (`whose`: "" for a baseline, " of every
// trial" for ab); for a job, batches of its DataLoader after warm-up, or seconds, then it is
// stopped (`job_default`: what a job does without either).
void add_length_options(CLI::App& app, std::optional<int>& steps, std::optional<double>& duration_s,
                        const std::string& whose, const std::string& job_default);

// A positional dataset folder with its --layout (auto | files | tar), for shard and stage.
void add_source_options(CLI::App& app, std::string& source, std::string& layout,
                        const std::string& what);

}  // namespace mmprof::cli
