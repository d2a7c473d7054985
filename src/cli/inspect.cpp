#include "cli/inspect.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/inspect_gpu.hpp"
#include "cli/usage.hpp"
#include "config/config_keys.hpp"
#include "env/inventory.hpp"
#include "mmprof/error.hpp"
#include "report/inventory_text.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"

namespace mmprof::cli {

void setup_inspect(CLI::App& app, InspectCliOptions& o) {
  app.add_option("--config,-c", o.run.config_file, "YAML configuration file (for data.path)")
      ->check(non_empty_path());
  app.add_option("--data", o.run.data, "Dataset folder to describe (files or tar shards)")
      ->check(non_empty_path());
  app.add_option("--set", o.run.sets, "Override a config key, e.g. --set data.layout=tar")
      ->allow_extra_args(false);
  add_repo_option(app, o.run.repo);
  app.add_option("--out,-o", o.run.out, "Write the inventory JSON to this file (atomically)");
  app.add_flag("--probe-storage", o.probe_storage,
               "Measure sequential and random 4 KiB read throughput on the data path (drops the "
               "page cache when allowed)");
  add_json_flag(app, o.json, "the inventory JSON");
  app.add_flag("--keys", o.keys,
               "List every configuration key --set and --config take, one per line: KEY, its "
               "values, its default and its meaning, tab-separated; then exit");
  app.add_option("--mix-samples", o.mix_samples,
                 "Probe at most this many samples for the data mix (a seeded random sample)")
      ->check(above(0));
  app.add_option("--seed", o.seed, "Seed of the data-mix sample");
  app.add_option("file", o.file,
                 "Describe this file instead of the machine: a GPU events file written by "
                 "libmmprof_cupti_inject.so");
  app.add_option("--planted", o.planted,
                 "With a GPU events file: check it against this planted plan "
                 "(mmprof_gpu_planted's output); exit 1 beyond --tolerance");
  app.add_option("--tolerance", o.tolerance, "Relative tolerance of the planted check")
      ->check(between(0, 1));
}

int run_inspect_command(const InspectCliOptions& o, const std::vector<std::string>& argv) {
  if (o.keys) {
    std::fputs(config::key_list_text().c_str(), stdout);
    return 0;
  }
  if (!o.file.empty()) {
    if (!std::filesystem::is_regular_file(o.file)) throw InputError(o.file + ": no such file");
    if (!gpu::is_gpu_events_file(o.file)) {
      throw InputError(o.file + " is not a file mmprof inspect recognizes (expected a GPU events " +
                       "file, schema " + gpu::kGpuEventsSchema + ")");
    }
    return run_inspect_gpu_events(o.file, o.planted, o.tolerance);
  }
  if (!o.planted.empty())
    throw UsageError("--planted needs a GPU events file (mmprof inspect FILE)");
  const session::ResolvedRun r = session::resolve_run(o.run);
  std::optional<Dataset> dataset;
  // No data path means no dataset: inspect does not generate the embedded default.
  if (r.config.data.path) {
    dataset = Dataset::open(*r.config.data.path, r.config.data.layout, r.config.data.remote);
  }
  if (o.probe_storage && !dataset)
    throw UsageError("--probe-storage needs a dataset (--data PATH)");
  if (!o.run.repo.empty() && !std::filesystem::is_directory(o.run.repo)) {
    throw InputError("--repo " + o.run.repo + " is not a directory");
  }
  env::InventoryOptions opts;
  opts.argv = argv;
  opts.repo = o.run.repo;
  opts.dataset = dataset ? &*dataset : nullptr;
  opts.mix_limit = o.mix_samples;
  opts.mix_seed = o.seed;
  opts.probe_storage = o.probe_storage;
  const nlohmann::json inventory = env::build_inventory(opts);
  if (!o.run.out.empty()) write_json_atomic(o.run.out, inventory);
  if (o.json) {
    print_json(inventory);
  } else {
    print_text(report::format_inventory(inventory));
    if (!o.run.out.empty()) std::printf("inventory: %s\n", o.run.out.c_str());
  }
  // A data-mix probe stopped by Ctrl-C: the inventory of what it probed is out, and exit 130
  // says it is partial.
  throw_if_interrupted();
  return 0;
}

}  // namespace mmprof::cli
