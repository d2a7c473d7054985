#include "session/run_options.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "gen/generator.hpp"
#include "loader/memory_plan.hpp"

namespace mmprof::session {

ProgressStyle progress_style(const Verbosity& v, bool json) {
  if (json || v.quiet) return ProgressStyle::none;
  if (v.verbose || isatty(STDERR_FILENO) == 0) return ProgressStyle::lines;
  return ProgressStyle::live;
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
  return Dataset::open(root / dataset_layout(config.data.layout).gen_folder, config.data.layout);
}

Dataset open_source(const std::string& source, const std::string& layout) {
  return Dataset::open(source, layout_named(layout).value_or(Layout::auto_detect));
}

std::string default_out_dir(const std::string& command) {
  const auto now = std::chrono::system_clock::now();
  return fmt::format("runs/{}-{:%Y%m%d-%H%M%S}-{}", command,
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)), getpid());
}

}  // namespace mmprof::session
