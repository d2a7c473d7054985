// mmprof: main only builds the app (CLI11's subcom_in_files pattern): each subcommand's file
// gives its options and setup; its run function is the subcommand's callback. Errors become an
// exit code and one clear sentence.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/ab.hpp"
#include "cli/baseline.hpp"
#include "cli/gen.hpp"
#include "cli/inspect.hpp"
#include "cli/report.hpp"
#include "cli/shard.hpp"
#include "cli/stage.hpp"
#include "cli/trace.hpp"
#include "cli/usage.hpp"
#include "mmprof/error.hpp"
#include "util/interrupt.hpp"
#include "util/version.hpp"

namespace {

using namespace mmprof;

// A subcommand: its name, its one-line description, and the examples its --help ends with.
struct Subcommand {
  const char* name;
  const char* description;
  const char* examples;
};

// Adds subcommand `c` with options set up by `setup`; their --help shows each option's default
// value. When it is chosen, `run` gets them and its exit status becomes the process's.
template <class Options, class Setup, class Run>
void add(CLI::App& app, const Subcommand& c, Setup setup, Run run, int& status) {
  auto options = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(c.name, c.description);
  sub->option_defaults()->always_capture_default();
  setup(*sub, *options);
  for (CLI::Option* opt : sub->get_options()) {
    if (opt->get_default_str() == "[]") opt->default_str("");  // an empty list has no default
  }
  sub->footer(std::string("Examples:\n") + c.examples);
  sub->callback([options, run, &status] { status = run(*options); });
}

// Every subcommand; the chosen one's exit status goes to `status`.
void add_subcommands(CLI::App& app, const std::vector<std::string>& args, int& status) {
  add<cli::GenCliOptions>(app,
                          {"gen", "Generate a deterministic synthetic dataset",
                           "  mmprof gen --out data --images 2000 --videos 50\n"
                           "  mmprof gen --out shards --layout tar --shard-mb 64 --seed 7"},
                          cli::setup_gen, cli::run_gen_command, status);
  add<cli::ShardCliOptions>(
      app,
      {"shard", "Write a dataset as balanced WebDataset-style tar shards, with an index",
       "  mmprof shard data/files --out data/shards --shard-mb 256\n"
       "  mmprof shard old-shards --out shards-by-count --by-count --shard-mb 64"},
      cli::setup_shard, cli::run_shard_command, status);
  add<cli::StageCliOptions>(
      app,
      {"stage", "Copy a dataset to local storage: parallel, resumable, with its cost in stage.json",
       "  mmprof stage /mnt/nfs/data/shards /nvme/shards\n"
       "  mmprof stage /mnt/nfs/data/shards /nvme/shards --threads 16 --json > stage.json"},
      cli::setup_stage, cli::run_stage_command, status);
  add<cli::BaselineCliOptions>(
      app,
      {"baseline", "Measure a configuration: compute ceiling, pipeline only, end to end",
       "  mmprof baseline --config configs/emulated-accelerator.yaml --out runs/base\n"
       "  mmprof baseline --data data --set loader.num_workers=8 --out runs/w8\n"
       "  mmprof baseline --steps 200 --out runs/job -- python train.py --epochs 1"},
      cli::setup_baseline,
      [&args](const cli::BaselineCliOptions& o) { return cli::run_baseline_command(o, args); },
      status);
  add<cli::BaselineCliOptions>(
      app,
      {"trace",
       "A baseline run with event tracing: the run directory plus trace.json (Chrome/Perfetto)",
       "  mmprof trace --config configs/emulated-accelerator.yaml --out runs/traced\n"
       "  mmprof trace --steps 100 --out runs/job-trace -- python train.py"},
      cli::setup_trace,
      [&args](const cli::BaselineCliOptions& o) { return cli::run_trace_command(o, args); },
      status);
  add<cli::AbCliOptions>(
      app,
      {"ab", "One-factor-at-a-time A/B experiments with statistics and verdicts",
       "  mmprof ab --config configs/emulated-accelerator.yaml --factor loader.num_workers=2,4 "
       "--out exp/workers\n"
       "  mmprof ab --experiment experiment.yaml --rounds 12 --out exp/levers\n"
       "  mmprof ab --factor loader.num_workers=2,4 --out exp/job -- python train.py"},
      cli::setup_ab, [&args](const cli::AbCliOptions& o) { return cli::run_ab_command(o, args); },
      status);
  add<cli::InspectCliOptions>(
      app,
      {"inspect", "Inventory: provenance, software, hardware, storage, network, data mix",
       "  mmprof inspect --data data\n"
       "  mmprof inspect --data data --probe-storage --json > inventory.json"},
      cli::setup_inspect,
      [&args](const cli::InspectCliOptions& o) { return cli::run_inspect_command(o, args); },
      status);
  add<cli::ReportCliOptions>(
      app,
      {"report",
       "Analyse runs and experiments: bottlenecks, recommendations, adopt/rollback, CI gate",
       "  mmprof report runs/base\n"
       "  mmprof report --compare runs/base runs/w8 --gate default\n"
       "  mmprof report exp/workers --gate criteria.yaml --out report"},
      cli::setup_report, cli::run_report_command, status);
}

// The main use first (a user's own job after --), then the exit codes (include/mmprof/error.hpp),
// for `mmprof --help` and CI scripts.
constexpr const char* kFooter =
    "Your own training job, unmodified (everything after -- is the job):\n"
    "  mmprof baseline --steps 200 --out runs/job -- python train.py --epochs 1\n"
    "  mmprof ab --factor loader.num_workers=4,8 -- python train.py --epochs 1\n"
    "  mmprof report runs/job\n"
    "mmprof's own loader on a dataset (the calibrated stand-in):\n"
    "  mmprof baseline --data DATASET --out runs/base\n"
    "\n"
    "Exit codes:\n"
    "  0    success (report --gate: pass)\n"
    "  1    the run could not continue; report --gate: a regression or rollback\n"
    "  2    usage: a bad option, config key or value, or an --out that is not mmprof's\n"
    "  3    an input (dataset, run directory, file) cannot be read\n"
    "  4    unavailable on this machine (GPU, libtorch)\n"
    "  5    report --gate: inconclusive (nothing regressed, something is undecided)\n"
    "  6    an output could not be written (disk full, quota)\n"
    "  130  interrupted (what was measured is kept)";

// "mmprof 0.1.0 (9e5d2aa1b2c3)", "-dirty" after the commit when the tree had local changes.
std::string version_line() {
  return std::string("mmprof ") + version() + " (" + std::string(git_commit()).substr(0, 12) +
         (git_dirty() ? "-dirty" : "") + ")";
}

// Parses and runs the chosen subcommand; a command line CLI11 refuses is printed in the one error
// style with its pointer to --help. mmprof's own errors (a bad value, key or file) stay one line,
// their sentence naming the option or key: main prints them.
int run(CLI::App& app, int argc, char** argv, const std::vector<std::string>& args,
        const int& status) {
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A bad option is a usage error (exit 2) whatever CLI11's own code for it is.
    std::fputs(cli::parse_error_text(app, e, args).c_str(), stderr);
    return static_cast<int>(ExitCode::usage);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Everything, the app's construction included, inside one try: an error has one way out.
  try {
    CLI::App app{"mmprof: profile and tune the image/video data pipelines of multimodal training"};
    app.set_version_flag("--version", version_line());
    app.require_subcommand(1);
    const std::vector<std::string> args(argv, argv + argc);
    int status = 0;
    add_subcommands(app, args, status);
    app.footer(kFooter);  // after the subcommands: their --help does not repeat it
    install_interrupt_handler();
    return run(app, argc, argv, args, status);
  } catch (const Error& e) {
    std::fputs(cli::error_text(e.what(), "", "").c_str(), stderr);
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mmprof: internal error: %s\n", e.what());
    return static_cast<int>(ExitCode::failure);
  }
}
