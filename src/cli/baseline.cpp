#include "cli/baseline.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/usage.hpp"
#include "report/terminal_summary.hpp"

namespace mmprof::cli {

void setup_baseline(CLI::App& app, BaselineCliOptions& o) {
  add_run_options(app, o.run);
  add_json_flag(app, o.json, "summary.json");
  add_length_options(app, o.steps, o.duration_s, "", " (default: a job runs until it ends)");
  app.add_option("--warmup-steps", o.warmup_steps,
                 "Warm-up steps left out of every figure (= --set phases.warmup_steps=N; default "
                 "10)")
      ->check(at_least(0));
  app.add_option("--loader", o.loader,
                 "A job with several DataLoaders: which one to follow (its construction index in "
                 "the process, or its dataset's class name); default: the one iterated most");
  app.add_option("--like", o.like,
                 "Configure mmprof's loader like the job measured in RUN (its DataLoader's batch "
                 "size, workers, prefetch, pinning, data and step time), to compare the stand-in "
                 "with the job in mmprof report RUN STAND_IN");
  app.add_option("--env", o.env, "A job: NAME=VALUE added to its environment (repeatable)")
      ->allow_extra_args(false);
  app.add_option("command", o.command,
                 "Your own job, after --: mmprof baseline -- python train.py ARGS (its "
                 "DataLoader is timed by a zero-code hook, its process tree sampled)");
  app.add_option("--nproc-per-node", o.nproc_per_node,
                 "Start N ranks of this run on this host, synchronised through c10d as under "
                 "torchrun (dist.sync); writes a job directory: one run per rank + job.json")
      ->check(CLI::Range(2, 1024));
  app.add_option("--resume", o.resume,
                 "Continue the interrupted run directory RUN from its checkpoint.json, with its "
                 "configuration, into a new run directory (--out, default RUN-resumed)");
}

int run_baseline_command(const BaselineCliOptions& o, const std::vector<std::string>& argv,
                         const std::string& command, session::BaselineRunner runner) {
  const session::BaselineOutcome out = session::run_baseline_session(o, argv, command, runner);
  if (out.kind == session::BaselineOutcome::Kind::none) return out.exit_code;
  const bool job = out.kind == session::BaselineOutcome::Kind::job;
  if (o.json) {
    print_json(job ? out.document : to_json(out.summary));
  } else if (!o.run.verbosity.quiet) {
    print_text(job ? report::format_job_summary(out.document)
                   : report::format_summary(out.summary, out.config_tree));
    std::printf("%s directory: %s\n", job ? "job" : "run",
                std::filesystem::absolute(out.dir).c_str());
  }
  return out.exit_code;
}

}  // namespace mmprof::cli
