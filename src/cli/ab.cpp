#include "cli/ab.hpp"

#include <cstdio>
#include <filesystem>

#include "ab/output.hpp"

namespace mmprof::cli {

void setup_ab(CLI::App& app, AbCliOptions& o) {
  add_run_options(app, o.run);
  app.add_option("--experiment,-e", o.experiment_file,
                 "Experiment YAML file (config, data, set, factors, preserving, rounds, seed, "
                 "cache, warmup_s, steps, duration_s)");
  app.add_option("--factor,-f", o.factors,
                 "KEY=V1,V2[,...]: V1 is the base's value, every other value one arm")
      ->allow_extra_args(false);
  app.add_option("--preserving", o.preserving,
                 "Declare KEY content-preserving: its arms must deliver the base's batch digests")
      ->allow_extra_args(false);
  app.add_option("--rounds,-r", o.rounds,
                 "Rounds (every arm once per round; at least 6, default 10)");
  app.add_option("--seed", o.seed, "Seed of the arm order in each round (default 1)");
  app.add_option("--cache", o.cache,
                 "Page-cache regime of every trial's loader phases: warm (default: the dataset "
                 "read first) or cold (emptied of it, no root needed): data.cache");
  app.add_option("--warmup-s", o.warmup_s, "Warm-up of each phase of a trial, seconds (default 1)");
  add_length_options(app, o.steps, o.duration_s, " of every trial", "");
  add_json_flag(app, o.json, "experiment.json");
  app.add_option("command", o.command,
                 "Your own job, after --: each trial launches it afresh (factors loader.*, "
                 "env.NAME, or NAME for {NAME} in the command)");
}

int run_ab_command(const AbCliOptions& o, const std::vector<std::string>& argv) {
  const session::PreparedExperiment p = session::prepare_experiment(o, argv);
  const nlohmann::json experiment =
      run_ab(p.design, p.options, p.psnr, session::process_trial_hooks());
  if (o.json) {
    print_json(experiment);
  } else if (!o.run.verbosity.quiet) {
    print_text(ab_terminal(experiment));
    std::printf("experiment directory: %s (matrix.md: the whole table)\n",
                std::filesystem::absolute(p.options.out).c_str());
  }
  return 0;
}

}  // namespace mmprof::cli
