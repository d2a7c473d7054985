#include "cli/baseline.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "cli/ranks.hpp"
#include "cli/resume.hpp"
#include "cli/usage.hpp"
#include "external/external_run.hpp"
#include "external/hook_env.hpp"
#include "external/job_process.hpp"
#include "external/stand_in.hpp"
#include "mmprof/baseline.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "probe/clock.hpp"
#include "report/terminal_summary.hpp"
#include "util/shell_quote.hpp"

namespace mmprof::cli {
namespace {

using nlohmann::json;

}  // namespace

void setup_baseline(CLI::App& app, BaselineCliOptions& o) {
  add_run_options(app, o.run);
  add_json_flag(app, o.json, "summary.json");
  app.add_option("--steps", o.steps,
                 "Measured steps (= --set phases.steps=N; default 100); for a job, batches of its "
                 "DataLoader after warm-up, then the job is stopped (default: the job runs until "
                 "it ends)")
      ->check(above(0));
  app.add_option("--warmup-steps", o.warmup_steps,
                 "Warm-up steps left out of every figure (= --set phases.warmup_steps=N; default "
                 "10)")
      ->check(at_least(0));
  app.add_option("--duration", o.duration_s,
                 "A job: stop it after this many seconds of measured steps (instead of --steps)")
      ->check(above(0));
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

namespace {

// --steps and --warmup-steps are phases.* for mmprof's loader (and for a job, its batch counts).
RunOptions with_step_options(const BaselineCliOptions& o) {
  RunOptions r = o.run;
  if (o.steps) r.sets.push_back(fmt::format("phases.steps={}", *o.steps));
  if (o.warmup_steps) r.sets.push_back(fmt::format("phases.warmup_steps={}", *o.warmup_steps));
  return r;
}

// Runs `run`; when it is interrupted (SIGINT, exit 130) after writing its checkpoint, the error
// names the run directory and ends with the command that continues it (`mmprof baseline` or
// `mmprof trace`, as `command` ran it), ready to paste.
template <class Run>
json with_resume_command(const std::string& command, const std::filesystem::path& out, Run run) {
  try {
    return run();
  } catch (const Error& e) {
    std::error_code ec;
    if (e.code() != ExitCode::interrupted ||
        !std::filesystem::exists(out / run_file::checkpoint, ec))
      throw;
    const std::string dir = std::filesystem::absolute(out).lexically_normal().string();
    throw Error(e.code(),
                fmt::format("{}; run directory {}; continue it with: mmprof {} --resume {}",
                            e.what(), dir, command, shell_word(dir)));
  }
}

// The run's result on stdout: summary.json under --json, nothing under --quiet, else the
// human summary and where the run directory is.
void print_result(const BaselineCliOptions& o, const json& summary, const json& config_tree,
                  const std::filesystem::path& out) {
  if (o.json) {
    print_json(summary);
  } else if (!o.run.verbosity.quiet) {
    std::fputs(report::format_summary(summary, config_tree).c_str(), stdout);
    std::printf("run directory: %s\n", std::filesystem::absolute(out).c_str());
  }
}

int run_job(const BaselineCliOptions& o, const std::vector<std::string>& argv,
            const std::string& command, bool trace) {
  if (!o.resume.empty()) throw UsageError("--resume continues mmprof's own loader, not a job");
  if (!o.run.data.empty()) {
    throw UsageError(
        "--data does not apply to a job (it reads its own data); use it with "
        "mmprof baseline --like RUN");
  }
  if (o.steps && o.duration_s)
    throw UsageError("--steps and --duration both bound the run: give one");
  // A command that cannot start is refused before --out holds anything of a run.
  external::resolve_command(o.command.front());
  const RunOptions run = with_step_options(o);
  const ResolvedRun r = resolve_run(run);
  external::ExternalRunOptions e;
  e.out = o.run.out.empty() ? default_out_dir(command) : o.run.out;
  e.force = o.run.force;
  e.argv = argv;
  e.command = o.command;
  e.config_tree = r.tree;
  e.config = r.config;
  e.overrides = external::dataloader_overrides(r.tree, run.sets);
  e.warmup_steps = r.config.phases.warmup_steps;
  // A job runs until it ends by itself unless it is bounded: --steps or phases.steps set.
  const bool steps_set = std::any_of(run.sets.begin(), run.sets.end(), [](const std::string& s) {
    return s.rfind("phases.steps=", 0) == 0;
  });
  if (steps_set) e.steps = r.config.phases.steps;
  e.duration_s = o.duration_s;
  e.loader = o.loader;
  for (const auto& kv : o.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--env " + kv + " must be NAME=VALUE");
    e.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  e.repo = o.run.repo;
  e.progress = progress_style(o.run.verbosity, o.json);
  e.show_job_output = !o.run.verbosity.quiet;
  e.trace = trace;
  print_result(o, external::run_external(e), e.config_tree, e.out);
  return 0;
}

// One rank of a job (under torchrun or --nproc-per-node): its run directory is JOB/rank-K;
// rank 0 prints the job, the others only their errors.
int run_rank(const BaselineCliOptions& o, const ResolvedRun& r, const Dataset& dataset,
             const json& like, const std::vector<std::string>& argv, BaselineRunner runner) {
  RankJob job = join_job(r.config, r.tree, dataset.fingerprint(), o.run.out);
  BaselineOptions b;
  b.out = job.out;
  b.force = o.run.force;
  b.argv = argv;
  b.config_tree = r.tree;
  b.repo = o.run.repo;
  b.progress =
      r.config.dist.rank == 0 ? progress_style(o.run.verbosity, o.json) : ProgressStyle::none;
  b.like = like;
  b.group = job.group.get();
  json summary;
  try {
    summary = runner(r.config, dataset, b);
  } catch (const Error&) {
    // What the others measured stays; rank 0 merges what is there (a peer may still be writing:
    // mmprof report JOB merges again).
    try {
      (void)finish_job(job, false);
    } catch (const Error&) {  // the run's own error is the one to report
    }
    throw;
  }
  const json merged = finish_job(job, true);
  if (merged.is_null()) return 0;
  if (o.json) {
    print_json(merged);
  } else if (!o.run.verbosity.quiet) {
    std::fputs(report::format_job_summary(merged).c_str(), stdout);
    std::printf("job directory: %s\n", job.job.c_str());
  }
  return 0;
}

}  // namespace

int run_baseline_command(const BaselineCliOptions& o, const std::vector<std::string>& argv,
                         const std::string& command, BaselineRunner runner) {
  if (o.nproc_per_node) return launch_ranks(o, argv, command);
  if (!o.command.empty()) return run_job(o, argv, command, runner != run_baseline);
  if (o.duration_s)
    throw UsageError("--duration bounds a job: mmprof baseline --duration S -- CMD");
  if (!o.loader.empty()) throw UsageError("--loader picks a job's DataLoader: -- CMD is missing");
  if (!o.env.empty()) throw UsageError("--env sets a job's environment: -- CMD is missing");
  const int64_t t_start = monotonic_ns();
  RunOptions run_options = with_step_options(o);
  nlohmann::json like;
  if (!o.like.empty()) {
    external::StandIn s = external::stand_in_for(RunDir::open(o.like));
    // The job's values first: the user's own --set and --data win over them.
    if (!o.run.data.empty()) {
      std::erase_if(s.sets, [](const std::string& v) { return v.rfind("data.path=", 0) == 0; });
    }
    run_options.sets.insert(run_options.sets.begin(), s.sets.begin(), s.sets.end());
    like = {{"run", std::filesystem::absolute(o.like).string()},
            {"sets", s.sets},
            {"why", s.why},
            {"unknown", s.unknown}};
  }
  BaselineOptions b;
  ResolvedRun r;
  if (o.resume.empty()) {
    r = resolve_run(run_options);
    b.out = o.run.out.empty() ? default_out_dir(command) : o.run.out;
  } else {
    ResumedRun resumed = resolve_resume(o.resume, o.run, t_start);
    r = std::move(resumed.resolved);
    b.out = resumed.out;
    b.resume = std::move(resumed.point);
  }
  const Dataset dataset = open_dataset(r.config);
  if (r.config.dist.world_size > 1) {
    if (!o.resume.empty()) throw UsageError("--resume continues one run, not a rank of a job");
    return run_rank(o, r, dataset, like, argv, runner);
  }
  b.force = o.run.force;
  b.argv = argv;
  b.config_tree = r.tree;
  b.repo = o.run.repo;
  b.progress = progress_style(o.run.verbosity, o.json);
  b.like = like;
  print_result(o, with_resume_command(command, b.out, [&] { return runner(r.config, dataset, b); }),
               b.config_tree, b.out);
  return 0;
}

}  // namespace mmprof::cli
