// mmprof: main only wires the subcommands (CLI11's subcom_in_files pattern) and maps errors to
// exit codes with one clear sentence.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/ab.hpp"
#include "cli/baseline.hpp"
#include "cli/gen.hpp"
#include "cli/inspect.hpp"
#include "cli/report.hpp"
#include "cli/trace.hpp"
#include "mmprof/error.hpp"
#include "util/interrupt.hpp"
#include "util/version.hpp"

int main(int argc, char** argv) {
  using namespace mmprof;
  CLI::App app{"mmprof: profile and tune the image/video data pipelines of multimodal training"};
  app.set_version_flag("--version", std::string(version()) + " (" + git_commit() + ")");
  app.require_subcommand(1);
  app.failure_message(CLI::FailureMessage::help);

  cli::GenCliOptions gen;
  cli::setup_gen(*app.add_subcommand("gen", "Generate a deterministic synthetic dataset"), gen);
  cli::BaselineCliOptions baseline;
  auto* baseline_app = app.add_subcommand(
      "baseline", "Measure a configuration: compute ceiling, pipeline only, end to end");
  cli::setup_baseline(*baseline_app, baseline);
  cli::BaselineCliOptions trace;
  cli::setup_trace(*app.add_subcommand("trace",
                                       "A baseline run with event tracing: the run directory plus "
                                       "trace.json (Chrome/Perfetto)"),
                   trace);
  cli::AbCliOptions ab;
  cli::setup_ab(*app.add_subcommand(
                    "ab", "One-factor-at-a-time A/B experiments with statistics and verdicts"),
                ab);
  cli::InspectCliOptions inspect;
  cli::setup_inspect(
      *app.add_subcommand("inspect",
                          "Inventory: provenance, software, hardware, storage, network, data mix"),
      inspect);
  cli::ReportCliOptions report;
  cli::setup_report(*app.add_subcommand("report",
                                        "Analyse runs and experiments: bottlenecks, "
                                        "recommendations, adopt/rollback, CI gate"),
                    report);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A bad option is a usage error (exit 2) whatever CLI11's own code for it is.
    app.exit(e);
    return static_cast<int>(ExitCode::usage);
  }
  install_interrupt_handler();
  const std::vector<std::string> args(argv, argv + argc);
  try {
    if (app.got_subcommand("gen")) return cli::run_gen_command(gen);
    if (app.got_subcommand("baseline")) return cli::run_baseline_command(baseline, args);
    if (app.got_subcommand("trace")) return cli::run_trace_command(trace, args);
    if (app.got_subcommand("inspect")) return cli::run_inspect_command(inspect, args);
    if (app.got_subcommand("ab")) return cli::run_ab_command(ab, args);
    if (app.got_subcommand("report")) return cli::run_report_command(report);
  } catch (const Error& e) {
    std::fprintf(stderr, "mmprof: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mmprof: internal error: %s\n", e.what());
    return static_cast<int>(ExitCode::failure);
  }
  return 0;
}
