#include "session/experiment.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "ab/content_check.hpp"
#include "ab/trial_process.hpp"
#include "external/hook_env.hpp"
#include "external/job_process.hpp"
#include "mmprof/error.hpp"
#include "probe/clock.hpp"
#include "util/interrupt.hpp"

namespace mmprof::session {
namespace {

std::string utc_now() {
  return fmt::format(
      "{:%Y-%m-%dT%H:%M:%SZ}",
      fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

// A resolved configuration (the base file, --data, then overrides), errors naming `what`.
ResolvedRun resolve_arm(const RunOptions& r, const std::string& what) {
  try {
    return resolve_run(r);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("{}: {}", what, e.what()));  // its own exit code
  }
}

// Each factor value alone over the base, so that a bad key or value is named as the user wrote it.
// A job's factors that are not configuration (env.NAME, {NAME}) take any value.
void check_factors(const ExperimentDesign& d, const nlohmann::json& base_tree) {
  for (const auto& f : d.factors) {
    if (factor_route(f.key, d.spec.command) != FactorRoute::config) continue;
    for (const auto& v : f.values) {
      nlohmann::json tree = base_tree;
      try {
        apply_override(tree, f.key + "=" + v);
        resolve_config(tree);
        if (!d.spec.command.empty()) external::dataloader_overrides(tree, {f.key + "=" + v});
      } catch (const Error& e) {
        throw UsageError(fmt::format("--factor {}={}: {}", f.key, v, e.what()));
      }
    }
  }
}

// The configuration sets of an arm (a job's env and placeholder factors are not configuration).
std::vector<std::string> config_sets(const ExperimentDesign& d, const Arm& arm) {
  std::vector<std::string> out;
  for (const auto& s : arm.overrides) {
    if (factor_route(s.substr(0, s.find('=')), d.spec.command) == FactorRoute::config)
      out.push_back(s);
  }
  return out;
}

// An arm of a data.path factor whose dataset holds the base's samples (the same dataset
// fingerprint: keys, formats and sizes, whichever layout and wherever stored) is checked as
// content-preserving: it must deliver the base's batch digests, so a copy whose bytes differ is
// caught. An arm holding other samples stays content-changing, said once.
void check_same_samples(ExperimentDesign& d, const AbOptions& a, const Dataset& base) {
  for (size_t f = 0; f < d.factors.size(); ++f) {
    if (d.factors[f].key != "data.path" || d.factors[f].content != ContentKind::changing) continue;
    bool all = true;
    for (size_t i = 0; i < d.arms.size(); ++i) {
      if (d.arms[i].factor != f) continue;
      const Dataset copy = open_dataset(a.arm_configs[i]);
      if (copy.fingerprint() == base.fingerprint()) {
        d.arms[i].content = ContentKind::preserving;
        continue;
      }
      all = false;
      std::fprintf(stderr,
                   "mmprof: note: data.path=%s (%zu samples, %llu bytes) holds other samples than "
                   "the base's %s (%zu samples, %llu bytes): its arm is content-changing\n",
                   d.arms[i].value.c_str(), copy.size(),
                   static_cast<unsigned long long>(copy.total_bytes()), base.root().c_str(),
                   base.size(), static_cast<unsigned long long>(base.total_bytes()));
    }
    if (all) d.factors[f].content = ContentKind::preserving;
  }
}

}  // namespace

ExperimentSpec experiment_spec(const ExperimentRequest& o) {
  ExperimentSpec s;
  if (!o.experiment_file.empty()) {
    s = load_experiment_file(o.experiment_file);
  } else if (o.factors.empty() && o.command.empty()) {
    s = default_experiment();
  }
  s.command = o.command;
  if (!o.run.config_file.empty()) s.config_file = o.run.config_file;
  if (!o.run.data.empty()) s.data = o.run.data;
  s.sets.insert(s.sets.end(), o.run.sets.begin(), o.run.sets.end());
  s.factors.insert(s.factors.end(), o.factors.begin(), o.factors.end());
  s.preserving.insert(s.preserving.end(), o.preserving.begin(), o.preserving.end());
  if (o.rounds) s.rounds = *o.rounds;
  if (o.seed) s.seed = *o.seed;
  if (o.cache) s.cache = *o.cache;
  if (o.warmup_s) s.warmup_s = *o.warmup_s;
  if (o.steps) s.steps = *o.steps;
  if (o.duration_s) s.duration_s = *o.duration_s;
  return s;
}

PreparedExperiment prepare_experiment(const ExperimentRequest& o,
                                      const std::vector<std::string>& argv) {
  PreparedExperiment p{.design = make_design(experiment_spec(o), host_memory_mib())};
  ExperimentDesign& d = p.design;
  AbOptions& a = p.options;
  // A job's command that cannot start is refused before --out holds anything (one that a factor
  // fills in, {NAME}, is checked by its trials).
  if (!d.spec.command.empty() && d.spec.command.front().find('{') == std::string::npos)
    external::resolve_command(d.spec.command.front());
  a.out = o.run.out.empty() ? default_out_dir("ab") : o.run.out;
  a.force = o.run.force;
  a.self = self_executable();
  a.argv = argv;
  a.progress = progress_style(o.run.verbosity, o.json);
  RunOptions base_only;
  base_only.config_file = d.spec.config_file;
  base_only.data = d.spec.data;
  base_only.sets = d.spec.sets;
  check_factors(d, resolve_arm(base_only, "the base (--config, --data, --set)").tree);
  for (const auto& arm : d.arms) {
    RunOptions r_opts = base_only;
    r_opts.sets = config_sets(d, arm);
    ResolvedRun r = resolve_arm(r_opts, "arm " + arm.id);
    if (a.arm_configs.empty()) a.base_tree = r.tree;
    a.arm_configs.push_back(r.config);
  }
  // A job reads its own data: mmprof has no dataset to prime or decode for PSNR.
  std::optional<Dataset> dataset;
  if (d.spec.command.empty()) {
    dataset = open_dataset(a.arm_configs[0]);
    check_same_samples(d, a, *dataset);
  }
  if (!dataset && d.cache == CacheRegime::cold) {
    throw UsageError(
        "--cache cold empties the page cache of mmprof's dataset before each loader phase of a "
        "trial; a job's trials run as they find it (its data is the job's own)");
  }
  for (size_t i = 0; i < d.arms.size(); ++i) {
    if (d.arms[i].content != ContentKind::lossy) continue;
    if (!dataset) {
      throw UsageError("--factor " + d.arms[i].id +
                       " changes decoded pixels, which a job's DataLoader cannot be asked to");
    }
    p.psnr[i] = batches_psnr(a.arm_configs[0], a.arm_configs[i], *dataset, d.psnr_batches);
  }
  return p;
}

TrialHooks process_trial_hooks() {
  // Trials are children this process waits for: a second Ctrl-C ends them first (run_child),
  // and the experiment is written as interrupted, rather than leaving them running.
  supervise_children();
  TrialHooks hooks;
  hooks.run = run_child;
  hooks.now_ns = monotonic_ns;
  hooks.utc_now = utc_now;
  return hooks;
}

}  // namespace mmprof::session
