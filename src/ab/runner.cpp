#include "ab/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "ab/analysis.hpp"
#include "ab/output.hpp"
#include "ab/trial_record.hpp"
#include "measure/progress.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "rundir/output_dir.hpp"
#include "util/interrupt.hpp"
#include "util/version.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "loader.num_workers=4" -> "loader.num_workers=4"; "A/A" -> "A_A": a safe directory name.
std::string dir_name(const std::string& arm_id) {
  std::string out = arm_id;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '=' && c != '-' &&
        c != '_')
      c = '_';
  }
  return out;
}

// The trials' folder in the claimed experiment directory.
void make_trials_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir / run_file::trials, ec);
  if (ec) throw OutputError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
}

}  // namespace

class ExperimentRun::Impl {
 public:
  Impl(const ExperimentDesign& d, const AbOptions& o, const std::map<size_t, double>& psnr,
       const TrialHooks& hooks)
      : d_(d),
        o_(o),
        psnr_(psnr),
        hooks_(hooks),
        metric_(choose_metric(o.arm_configs[0], !d.spec.command.empty())),
        progress_(o.progress, hooks.now_ns) {
    doc_ = {{"schema", run_schema::experiment},
            {"status", "running"},
            {"message", ""},
            {"mmprof", {{"version", version()}, {"commit", git_commit()}}},
            {"command_line", o.argv},
            {"experiment_dir", fs::absolute(o.out).string()},
            {"started_utc", hooks.utc_now()},
            {"design", design_json(d, o.base_tree, to_json(metric_))},
            {"order", json::array()},
            {"trials", json::array()},
            {"looks", json::array()}};
  }

  void start() {
    out_dir_.emplace(o_.out, rundir::OutputKind::experiment, o_.force);
    make_trials_dir(o_.out);
    publish(look_alpha(d_, 1));
  }

  bool next_round() {
    if (ended_) return false;
    try {
      run_round(rounds_);
      ++rounds_;
      ended_ = at_interim_look(rounds_) || nothing_left(rounds_);
      if (!ended_ && rounds_ == d_.spec.rounds) {
        finish("complete", "");
        ended_ = true;
      }
    } catch (const Error& e) {
      ended_ = true;
      finish(e.code() == ExitCode::interrupted ? "interrupted" : "failed", e.what());
      throw;
    }
    return !ended_;
  }

  int rounds_done() const noexcept { return rounds_; }
  const json& document() const noexcept { return doc_; }

 private:
  // An arm is run until it is INVALID: a failed correctness check or a failed trial stays in its
  // verdict whatever later rounds measure, so its later trials would cost time and decide
  // nothing (the order of a round lists the arms it ran).
  void run_round(int r) {
    std::vector<size_t> order = round_order(d_, r);
    std::erase_if(order, [&](size_t arm) { return retired_.count(arm) > 0; });
    json ids = json::array();
    for (size_t arm : order)
      ids.push_back(d_.arms[arm].id);
    doc_["order"].push_back(ids);
    for (size_t pos = 0; pos < order.size(); ++pos) {
      throw_if_interrupted();
      run_trial(r, static_cast<int>(pos), order[pos]);
      throw_if_interrupted();
    }
  }

  // A job's trial: `mmprof baseline` of the job with the arm's DataLoader arguments, its
  // environment and its command's placeholders; warm-up and measured steps as batches of the
  // job's DataLoader, or the measured seconds of --duration.
  std::vector<std::string> job_trial_argv(size_t arm, const fs::path& run_dir) const {
    const Config& c = o_.arm_configs[arm];
    const int workers = std::max(1, c.loader.num_workers);
    const int warmup = std::max(c.phases.warmup_steps, 2 * workers * c.loader.prefetch_factor);
    std::vector<std::string> argv = {o_.self.string(), "baseline", "--warmup-steps",
                                     std::to_string(warmup)};
    if (d_.spec.duration_s) {
      argv.insert(argv.end(), {"--duration", fmt::format("{}", *d_.spec.duration_s)});
    } else {
      argv.insert(argv.end(), {"--steps", std::to_string(c.phases.steps)});
    }
    for (const auto& s : d_.arms[arm].overrides) {
      const std::string key = s.substr(0, s.find('='));
      switch (factor_route(key, d_.spec.command)) {
        case FactorRoute::config:
          argv.insert(argv.end(), {"--set", s});
          break;
        case FactorRoute::env:
          argv.insert(argv.end(), {"--env", s.substr(4)});
          break;
        case FactorRoute::placeholder:
          break;  // substituted into the command below
      }
    }
    argv.insert(argv.end(), {"--out", run_dir.string(), "--json", "--"});
    const auto command = substitute_command(d_.spec.command, d_.arms[arm].overrides);
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }

  std::vector<std::string> trial_argv(size_t arm, const fs::path& run_dir) const {
    if (!d_.spec.command.empty()) return job_trial_argv(arm, run_dir);
    const Config& c = o_.arm_configs[arm];
    // Warm-up: at least T seconds and 2 x workers x prefetch batches (in steps of accum batches).
    const int batches = 2 * c.loader.num_workers * c.loader.prefetch_factor;
    const int steps =
        std::max(c.phases.warmup_steps, (batches + c.step.accum_steps - 1) / c.step.accum_steps);
    std::vector<std::string> argv = {o_.self.string(), "baseline"};
    if (!d_.spec.config_file.empty()) argv.insert(argv.end(), {"--config", d_.spec.config_file});
    if (!d_.spec.data.empty()) argv.insert(argv.end(), {"--data", d_.spec.data});
    // The declared cache regime first, so that an arm of a data.cache factor overrides it.
    std::vector<std::string> sets = {
        fmt::format("data.cache={}", d_.cache == CacheRegime::cold ? "cold" : "warm")};
    sets.insert(sets.end(), d_.arms[arm].overrides.begin(), d_.arms[arm].overrides.end());
    sets.push_back(fmt::format("phases.warmup_steps={}", steps));
    sets.push_back(
        fmt::format("phases.warmup_s={}", std::max(c.phases.warmup_s, d_.spec.warmup_s)));
    sets.push_back(fmt::format("phases.steady_blocks={}", d_.steady_blocks));
    for (const auto& s : sets)
      argv.insert(argv.end(), {"--set", s});
    argv.insert(argv.end(), {"--out", run_dir.string(), "--json"});
    return argv;
  }

  void run_trial(int r, int pos, size_t arm) {
    TrialRecord t;
    t.round = r;
    t.position = pos;
    t.arm = arm;
    t.run_dir = fmt::format("{}/r{:02d}-{}", run_file::trials, r, dir_name(d_.arms[arm].id));
    const fs::path run_dir = o_.out / t.run_dir;
    const int64_t t0 = hooks_.now_ns();
    t.exit_code = hooks_.run(trial_argv(arm, run_dir), o_.out / (t.run_dir + ".log"));
    t.wall_s = static_cast<double>(hooks_.now_ns() - t0) / 1e9;
    read_trial_outputs(run_dir, metric_, t);
    if (t.invalid.empty() && d_.arms[arm].factor)
      t.invalid = unexercised_factor(d_.factors[*d_.arms[arm].factor].key, t);
    const bool stopped = t.exit_code == static_cast<int>(ExitCode::interrupted) || interrupted();
    t.status = stopped ? "interrupted" : (t.exit_code == 0 && t.metric ? "complete" : "failed");
    // What a trial that did not finish measured is no result: no throughput is shown for it.
    if (t.status != "complete") t.metric.reset();
    doc_["trials"].push_back(to_json(t, d_.arms[arm].id));
    trials_.push_back(std::move(t));
    const TrialRecord& done = trials_.back();
    progress_.unit_done(
        "trial", static_cast<int64_t>(trials_.size()), planned_trials(r),
        fmt::format("round {} of {}, arm {}: {} in {}", r + 1, d_.spec.rounds, d_.arms[arm].id,
                    done.metric ? fmt::format("{} {:.1f}", metric_.key, *done.metric) : done.status,
                    human_duration(done.wall_s)));
    publish(look_alpha(d_, r + 1));
    // Every arm is compared with the base: when the base itself fails, nothing is left to compare
    // with, and the job's failure under its own configuration is what the user must see.
    if (arm == 0 && done.status == "failed") {
      throw Error(
          ExitCode::failure,
          fmt::format("the base's trial {} exited with status {}{} (see {}.log): with no base "
                      "to compare against, the experiment stops",
                      done.run_dir, done.exit_code, failure_text(done),
                      (o_.out / done.run_dir).string()));
    }
  }

  // After `rounds` complete rounds: at a planned interim look, stop when every factor arm is
  // decided at the alpha this look spends.
  bool at_interim_look(int rounds) {
    const bool planned = std::count(d_.looks.begin(), d_.looks.end(), rounds) > 0;
    if (!planned || rounds == d_.spec.rounds) return false;
    const double alpha = look_alpha(d_, rounds);
    const Analysis a = analyze(d_, trials_, psnr_, alpha);
    doc_["looks"].push_back(
        {{"round", rounds},
         {"alpha_spent",
          stats::obf_alpha_spent(static_cast<double>(rounds) / d_.spec.rounds, d_.alpha)},
         {"alpha_nominal", alpha},
         {"stop", a.all_factor_arms_decided}});
    if (!a.all_factor_arms_decided) return false;
    publish(alpha);
    finish("stopped_early", fmt::format("every factor arm was decided at the planned look after "
                                        "round {} of {}",
                                        rounds, d_.spec.rounds));
    return true;
  }

  // The trials run so far, the rest of round `round`'s order, and the later rounds with the arms
  // still live.
  int64_t planned_trials(int round) const {
    const auto done_in_round = std::count_if(
        trials_.begin(), trials_.end(), [&](const TrialRecord& t) { return t.round == round; });
    const auto left_in_round = static_cast<int64_t>(doc_["order"].back().size()) - done_in_round;
    const auto live = static_cast<int64_t>(d_.arms.size() - retired_.size());
    return static_cast<int64_t>(trials_.size()) + left_in_round +
           live * (d_.spec.rounds - round - 1);
  }

  // After `rounds` rounds: stop when every factor arm is INVALID, as nothing is left to compare.
  bool nothing_left(int rounds) {
    bool any_live = false;
    for (size_t arm = 0; arm < d_.arms.size(); ++arm)
      any_live = any_live || (d_.arms[arm].role == "factor" && retired_.count(arm) == 0);
    if (any_live || rounds == d_.spec.rounds) return false;
    finish("stopped_early",
           fmt::format("every factor arm was INVALID after round {} of {}: nothing is left to "
                       "compare",
                       rounds, d_.spec.rounds));
    return true;
  }

  void publish(double alpha) {
    const Analysis a = analyze(d_, trials_, psnr_, alpha);
    json results = json::array();
    for (const auto& r : a.arms) {
      results.push_back(to_json(r, d_));
      if (r.verdict == "INVALID") retired_.insert(r.arm);
    }
    doc_["calibration"] = to_json(a.calibration);
    if (const json cache = cache_at_window(d_, trials_); !cache.is_null())
      doc_["cache_at_window"] = cache;
    doc_["alpha_nominal"] = alpha;
    doc_["results"] = results;
    doc_["updated_utc"] = hooks_.utc_now();
    write_experiment_files(o_.out, doc_);
  }

  void finish(const std::string& status, const std::string& message) {
    progress_.finish();
    if (status == "complete") {
      doc_["looks"].push_back({{"round", d_.spec.rounds},
                               {"alpha_spent", d_.alpha},
                               {"alpha_nominal", look_alpha(d_, d_.spec.rounds)},
                               {"stop", true}});
    }
    doc_["status"] = status;
    doc_["message"] = message;
    doc_["updated_utc"] = hooks_.utc_now();
    write_experiment_files(o_.out, doc_);
  }

  const ExperimentDesign& d_;
  const AbOptions& o_;
  const std::map<size_t, double>& psnr_;
  const TrialHooks& hooks_;
  MetricChoice metric_;
  ProgressLine progress_;
  json doc_;
  std::vector<TrialRecord> trials_;
  std::set<size_t> retired_;  // arms found INVALID: no later round runs them
  // Held while the experiment runs: its trials write into it (each claims its own folder).
  std::optional<rundir::OutputDir> out_dir_;
  int rounds_ = 0;
  bool ended_ = false;
};

ExperimentRun::ExperimentRun(const ExperimentDesign& d, const AbOptions& options,
                             const std::map<size_t, double>& psnr, const TrialHooks& hooks)
    : impl_(std::make_unique<Impl>(d, options, psnr, hooks)) {}
ExperimentRun::~ExperimentRun() = default;
void ExperimentRun::start() {
  impl_->start();
}
bool ExperimentRun::next_round() {
  return impl_->next_round();
}
int ExperimentRun::rounds_done() const noexcept {
  return impl_->rounds_done();
}
const nlohmann::json& ExperimentRun::document() const noexcept {
  return impl_->document();
}

json run_ab(const ExperimentDesign& d, const AbOptions& options,
            const std::map<size_t, double>& psnr, const TrialHooks& hooks) {
  ExperimentRun run(d, options, psnr, hooks);
  run.start();
  while (run.next_round()) {
  }
  return run.document();
}

}  // namespace mmprof
