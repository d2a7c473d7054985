#include "session/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "external/external_run.hpp"
#include "external/hook_env.hpp"
#include "external/job_process.hpp"
#include "external/stand_in.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "probe/clock.hpp"
#include "session/ranks.hpp"
#include "session/resume.hpp"
#include "util/shell_quote.hpp"

namespace mmprof::session {
namespace {

using nlohmann::json;

constexpr double kMaxDurationS = 7 * 86400;

// --steps and --warmup-steps are phases.* for mmprof's loader (and for a job, its batch counts).
RunOptions with_step_options(const BaselineRequest& o) {
  RunOptions r = o.run;
  if (o.steps) r.sets.push_back(fmt::format("phases.steps={}", *o.steps));
  if (o.warmup_steps) r.sets.push_back(fmt::format("phases.warmup_steps={}", *o.warmup_steps));
  return r;
}

// Runs `run`; when it is interrupted (SIGINT, exit 130) after writing its checkpoint, the error
// names the run directory and ends with the command that continues it (`mmprof baseline` or
// `mmprof trace`, as `command` ran it), ready to paste.
template <class Run>
Summary with_resume_command(const std::string& command, const std::filesystem::path& out, Run run) {
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

BaselineOutcome run_outcome(const Summary& summary, json config_tree, std::filesystem::path dir) {
  return {.kind = BaselineOutcome::Kind::run,
          .summary = summary,
          .config_tree = std::move(config_tree),
          .dir = std::move(dir)};
}

// A job's options as external::run_external takes them; the job's --set loader.* become its
// DataLoader's arguments.
external::ExternalRunOptions job_options(const BaselineRequest& o,
                                         const std::vector<std::string>& argv,
                                         const std::string& command) {
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
  return e;
}

BaselineOutcome run_job(const BaselineRequest& o, const std::vector<std::string>& argv,
                        const std::string& command, bool trace) {
  if (!o.resume.empty()) throw UsageError("--resume continues mmprof's own loader, not a job");
  if (!o.run.data.empty()) {
    throw UsageError(
        "--data does not apply to a job (it reads its own data); use it with "
        "mmprof baseline --like RUN");
  }
  if (o.steps && o.duration_s)
    throw UsageError("--steps and --duration both bound the run: give one");
  // Seconds become int64 nanoseconds in the stop logic: a week bounds them far from overflow.
  if (o.duration_s && *o.duration_s > kMaxDurationS) {
    throw UsageError(fmt::format("--duration must be at most {} seconds (a week), got {}",
                                 kMaxDurationS, *o.duration_s));
  }
  // A command that cannot start is refused before --out holds anything of a run.
  external::resolve_command(o.command.front());
  external::ExternalRunOptions e = job_options(o, argv, command);
  e.trace = trace;
  const Summary summary = external::run_external(e);
  return run_outcome(summary, e.config_tree, e.out);
}

// One rank of a job (under torchrun or --nproc-per-node): its run directory is JOB/rank-K;
// rank 0 has the job to show, the others nothing.
BaselineOutcome run_rank(const BaselineRequest& o, const ResolvedRun& r, const Dataset& dataset,
                         const json& like, const std::vector<std::string>& argv,
                         BaselineRunner runner) {
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
  try {
    (void)runner(r.config, dataset, b);
  } catch (const Error&) {
    // What the others measured stays; rank 0 merges what is there (a peer may still be writing:
    // mmprof report JOB merges again).
    try {
      (void)finish_job(job, false);
    } catch (const Error&) {  // the run's own error is the one to report
    }
    throw;
  }
  json merged = finish_job(job, true);
  if (merged.is_null()) return {};
  return {.kind = BaselineOutcome::Kind::job, .document = std::move(merged), .dir = job.job};
}

// --like RUN: the job's values as --set before the user's own (--set and --data win over them);
// returns manifest.json's `like`.
json apply_like(const BaselineRequest& o, RunOptions& run_options) {
  if (o.like.empty()) return nullptr;
  external::StandIn s = external::stand_in_for(RunDir::open(o.like));
  if (!o.run.data.empty()) {
    std::erase_if(s.sets, [](const std::string& v) { return v.rfind("data.path=", 0) == 0; });
  }
  run_options.sets.insert(run_options.sets.begin(), s.sets.begin(), s.sets.end());
  return {{"run", std::filesystem::absolute(o.like).string()},
          {"sets", s.sets},
          {"why", s.why},
          {"unknown", s.unknown}};
}

}  // namespace

BaselineOutcome run_baseline_session(const BaselineRequest& o, const std::vector<std::string>& argv,
                                     const std::string& command, BaselineRunner runner) {
  if (o.nproc_per_node) return launch_ranks(o, argv, command);
  if (!o.command.empty()) return run_job(o, argv, command, runner != run_baseline);
  if (o.duration_s)
    throw UsageError("--duration bounds a job: mmprof baseline --duration S -- CMD");
  if (!o.loader.empty()) throw UsageError("--loader picks a job's DataLoader: -- CMD is missing");
  if (!o.env.empty()) throw UsageError("--env sets a job's environment: -- CMD is missing");
  const int64_t t_start = monotonic_ns();
  RunOptions run_options = with_step_options(o);
  const json like = apply_like(o, run_options);
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
  const Summary summary =
      with_resume_command(command, b.out, [&] { return runner(r.config, dataset, b); });
  return run_outcome(summary, b.config_tree, b.out);
}

}  // namespace mmprof::session
