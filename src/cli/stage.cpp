#include "cli/stage.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/usage.hpp"
#include "measure/progress.hpp"

namespace mmprof::cli {

void setup_stage(CLI::App& app, StageCliOptions& o) {
  add_source_options(app, o.source, o.layout, "Dataset to copy");
  app.add_option("dest", o.stage.dest, "Where to copy it (local storage)")->required();
  app.add_option("--threads", o.stage.threads, "Files copied at once")->check(at_least(1));
  add_json_flag(app, o.json, "stage.json");
  add_verbosity_flags(app, o.verbosity);
}

int run_stage_command(StageCliOptions o) {
  const Dataset source = session::open_source(o.source, o.layout);
  ProgressLine progress(session::progress_style(o.verbosity, o.json));
  o.stage.progress = [&progress](uint64_t done, uint64_t total) {
    progress.update("stage", static_cast<int64_t>(done / 1'000'000),
                    static_cast<int64_t>(total / 1'000'000), 0, "MB");
  };
  const auto s = stage_dataset(source, o.stage);
  progress.finish();
  if (o.json) {
    print_json(s);
  } else if (!o.verbosity.quiet) {
    std::printf(
        "staged: %s (%zu files, %.1f MB copied at %.1f MB/s, %zu already there; stage.json)\n",
        std::filesystem::absolute(o.stage.dest).c_str(), s["files"].get<size_t>(),
        s["copied_bytes"].get<double>() / 1e6,
        s["copied_mb_per_s"].is_number() ? s["copied_mb_per_s"].get<double>() : 0.0,
        s["already_there_files"].get<size_t>());
  }
  return 0;
}

}  // namespace mmprof::cli
