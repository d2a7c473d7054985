#pragma once
// The `mmprof ab` protocol: randomized multiple interleaved trials (Abedi & Brecht, "Conducting
// Repeatable Experiments in Highly Variable Cloud Computing Environments", ICPE 2017): every
// round runs every arm once, as a fresh process, in a fresh seeded random order; the base, an
// A/A copy of it and each one-factor arm are compared round by round (experiment/ab_analysis).
// The experiment directory is rewritten after every trial, so an interrupt keeps finished trials.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ab/design.hpp"
#include "mmprof/config.hpp"
#include "mmprof/progress.hpp"

namespace mmprof {

// The world the protocol acts on, injected so tests can drive it without processes or clocks.
struct TrialHooks {
  // Runs a trial's argv with its output to the log path; returns the exit status.
  std::function<int(const std::vector<std::string>& argv, const std::filesystem::path& log)> run;
  std::function<int64_t()> now_ns;       // a monotonic clock
  std::function<std::string()> utc_now;  // ISO 8601, for the record
};

struct AbOptions {
  std::filesystem::path out;                     // the experiment directory
  bool force = false;                            // --force: replace an experiment already in `out`
  std::filesystem::path self;                    // the mmprof binary trials run
  std::vector<std::string> argv;                 // the command line, for experiment.json
  ProgressStyle progress = ProgressStyle::none;  // one line per trial on stderr
  nlohmann::json base_tree;                      // the resolved base configuration, for the record
  std::vector<Config> arm_configs;  // the resolved configuration of every arm (design order)
};

// One experiment driven round by round: run_ab is its whole loop; `tune` drives it to decide
// between rounds. `d`, `options`, `psnr` and `hooks` must outlive it.
class ExperimentRun {
 public:
  ExperimentRun(const ExperimentDesign& d, const AbOptions& options,
                const std::map<size_t, double>& psnr, const TrialHooks& hooks);
  ~ExperimentRun();
  ExperimentRun(const ExperimentRun&) = delete;
  ExperimentRun& operator=(const ExperimentRun&) = delete;

  // Claims the experiment directory (held until the run is destroyed) and writes the first
  // experiment.json.
  void start();
  // Runs the next round (every live arm once, in the round's seeded order; each trial published
  // as it ends). Returns false once the experiment has ended: every round run, a planned interim
  // look stopped it, or every factor arm is INVALID; experiment.json then has its final status.
  // On an error (an interrupt, the base's trial failing) the directory says so and it is rethrown.
  bool next_round();
  // Rounds run so far.
  int rounds_done() const noexcept;
  // experiment.json as last written.
  const nlohmann::json& document() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs the experiment described by `d`. `psnr` gives the PSNR (dB) of each lossy arm, measured
// beforehand. Returns experiment.json's final content; throws Error(interrupted) after writing
// the directory when interrupted.
nlohmann::json run_ab(const ExperimentDesign& d, const AbOptions& options,
                      const std::map<size_t, double>& psnr, const TrialHooks& hooks);

}  // namespace mmprof
