#include "cli/common.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli/usage.hpp"
#include "report/terminal_summary.hpp"
#include "util/files.hpp"

namespace mmprof::cli {

void add_run_options(CLI::App& app, session::RunOptions& o) {
  app.add_option("--config,-c", o.config_file, "YAML configuration file (see configs/)")
      ->check(non_empty_path());
  app.add_option("--data", o.data, "Dataset folder (files or tar shards); = --set data.path=PATH")
      ->check(non_empty_path());
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

void add_verbosity_flags(CLI::App& app, session::Verbosity& v) {
  app.add_flag("--quiet,-q", v.quiet,
               "No progress and no summary on the terminal: errors only (the files hold it all)");
  app.add_flag("--verbose", v.verbose,
               "Progress as one plain line per finished phase or trial, on a terminal too");
}

void add_json_flag(CLI::App& app, bool& json, const std::string& what) {
  app.add_flag("--json", json,
               "Print " + what + " on stdout instead of the human summary (nothing else there)");
}

void print_json(const nlohmann::json& doc) {
  std::puts(json_text(doc).c_str());
}

size_t text_width() {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n >= 20) return static_cast<size_t>(n);
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0 ||
      size.ws_col == 0)
    return 0;
  return std::min<size_t>(size.ws_col, 100);
}

void print_text(const std::string& text) {
  std::fputs(report::wrap_lines(text, text_width()).c_str(), stdout);
}

void add_repo_option(CLI::App& app, std::string& repo) {
  app.add_option("--repo", repo,
                 "Your code's git repository, recorded in the manifest (default: the working "
                 "directory)");
}

void add_length_options(CLI::App& app, std::optional<int>& steps, std::optional<double>& duration_s,
                        const std::string& whose, const std::string& job_default) {
  app.add_option("--steps", steps,
                 fmt::format("Measured steps{} (= --set phases.steps=N; default 100); for a job, "
                             "batches of its DataLoader after warm-up, then it is stopped{}",
                             whose, job_default))
      ->check(above(0));
  app.add_option("--duration", duration_s,
                 fmt::format("A job: stop {} after this many seconds of measured steps (instead "
                             "of --steps)",
                             whose.empty() ? "it" : "each trial"))
      ->check(above(0));
}

void add_source_options(CLI::App& app, std::string& source, std::string& layout,
                        const std::string& what) {
  app.add_option("source", source, what + ": a folder of files, or tar shards")->required();
  app.add_option("--layout", layout, "The source's layout: auto | files | tar")
      ->check(CLI::IsMember({"auto", "files", "tar"}));
}

}  // namespace mmprof::cli
