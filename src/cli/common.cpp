#include "cli/common.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "gen/generator.hpp"
#include "loader/memory_plan.hpp"

namespace mmprof::cli {

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--config,-c", o.config_file, "YAML configuration file (see configs/)");
  app.add_option("--data", o.data, "Dataset folder (files or tar shards); = --set data.path=PATH");
  app.add_option("--set", o.sets, "Override a config key, e.g. --set loader.num_workers=4")
      ->allow_extra_args(false);
  app.add_option("--out,-o", o.out, "Output directory (default runs/<command>-<time>)");
  app.add_flag("--force", o.force,
               "Replace the output of an earlier mmprof run in --out (its files are removed "
               "first); without it a non-empty --out is refused");
  add_repo_option(app, o.repo);
  app.add_option("--max-host-memory", o.max_host_memory,
                 "Refuse configurations whose loader reserves more host memory (shared ring + "
                 "pinned + worker scratch), e.g. 16G");
  add_verbosity_flags(app, o.verbosity);
}

void add_verbosity_flags(CLI::App& app, Verbosity& v) {
  app.add_flag("--quiet,-q", v.quiet,
               "No progress and no summary on the terminal: errors only (the files hold it all)");
  app.add_flag("--verbose", v.verbose,
               "Progress as one plain line per finished phase or trial, on a terminal too");
}

ProgressStyle progress_style(const Verbosity& v, bool json) {
  if (json || v.quiet) return ProgressStyle::none;
  if (v.verbose || isatty(STDERR_FILENO) == 0) return ProgressStyle::lines;
  return ProgressStyle::live;
}

void add_json_flag(CLI::App& app, bool& json, const std::string& what) {
  app.add_flag("--json", json,
               "Print " + what + " on stdout instead of the human summary (nothing else there)");
}

void print_json(const nlohmann::json& doc) {
  std::puts(doc.dump(2).c_str());
}

void add_repo_option(CLI::App& app, std::string& repo) {
  app.add_option("--repo", repo,
                 "Your code's git repository, recorded in the manifest (default: the working "
                 "directory)");
}

ResolvedRun resolve_run(const RunOptions& o) {
  ResolvedRun r;
  r.tree = o.config_file.empty() ? default_config_tree() : load_config_tree(o.config_file);
  if (!o.data.empty()) r.tree["data"]["path"] = o.data;
  for (const auto& s : o.sets)
    apply_override(r.tree, s);
  r.config = resolve_config(r.tree);
  check_max_host_memory(r.config, o.max_host_memory);
  return r;
}

void check_max_host_memory(const Config& config, const std::string& max_host_memory) {
  if (max_host_memory.empty()) return;
  check_host_memory(plan_host_memory(config, uses_pinned_memory(config.loader.pin_memory)),
                    parse_byte_size(max_host_memory, "--max-host-memory"));
}

Dataset open_dataset(const Config& config) {
  if (config.data.path) {
    return Dataset::open(*config.data.path, config.data.layout, config.data.remote);
  }
  if (!std::filesystem::exists(default_dataset_dir() / "dataset.json")) {
    std::fprintf(stderr,
                 "mmprof: generating the embedded default dataset into %s (first use only, "
                 "about half a minute)\n",
                 default_dataset_dir().c_str());
  }
  const auto root = ensure_default_dataset();
  const bool tar = config.data.layout == Layout::tar;
  return Dataset::open(root / (tar ? "shards" : "files"), config.data.layout);
}

std::string default_out_dir(const std::string& command) {
  const auto now = std::chrono::system_clock::now();
  return fmt::format("runs/{}-{:%Y%m%d-%H%M%S}-{}", command,
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)), getpid());
}

void add_source_options(CLI::App& app, std::string& source, std::string& layout,
                        const std::string& what) {
  app.add_option("source", source, what + ": a folder of files, or tar shards")->required();
  app.add_option("--layout", layout, "The source's layout: auto | files | tar")
      ->check(CLI::IsMember({"auto", "files", "tar"}));
}

Dataset open_source(const std::string& source, const std::string& layout) {
  return Dataset::open(source, layout == "files" ? Layout::files
                               : layout == "tar" ? Layout::tar
                                                 : Layout::auto_detect);
}

}  // namespace mmprof::cli
