#pragma once
// `mmprof ab` as an application, without a terminal: the experiment a request asks for, prepared
// (design, every arm resolved, a data.path arm's samples compared with the base's, the lossy
// arms' PSNR measured, a job's command checked) and then run by ab/runner's protocol. `tune`
// prepares experiments the same way. The CLI declares its options into ExperimentRequest
// (cli/ab) and prints experiment.json.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ab/design.hpp"
#include "ab/runner.hpp"
#include "session/run_options.hpp"

namespace mmprof::session {

struct ExperimentRequest {
  RunOptions run;  // --config, --data, --set (the base), --out, --repo
  std::string experiment_file;
  std::vector<std::string> factors, preserving;
  std::optional<int> rounds;
  std::optional<uint64_t> seed;
  std::optional<std::string> cache;
  std::optional<double> warmup_s;
  std::optional<int> steps;          // --steps: every trial's measured steps
  std::optional<double> duration_s;  // --duration: a job's trials' measured seconds
  std::vector<std::string> command;  // a user's own job, after --
  bool json = false;                 // --json: experiment.json on stdout, so no progress on stderr
};

// The experiment a request asks for: the experiment file (or, with no factor and no file, the
// embedded default experiment), then the request's options on top. Pure.
ExperimentSpec experiment_spec(const ExperimentRequest& request);

// An experiment ready to run: nothing of it is in its directory yet.
struct PreparedExperiment {
  ExperimentDesign design{};
  AbOptions options{};
  std::map<size_t, double> psnr{};  // each lossy arm's PSNR (dB) against the base
};

// Everything that can be refused before the experiment directory holds anything: the design, a
// job's command, each factor value over the base (named as the user wrote it), every arm's
// configuration; then the base's dataset is opened and the lossy arms' PSNR measured.
PreparedExperiment prepare_experiment(const ExperimentRequest& request,
                                      const std::vector<std::string>& argv);

// The world a real experiment acts on: trials as child processes of this binary, the monotonic
// clock, UTC time for the record.
TrialHooks process_trial_hooks();

}  // namespace mmprof::session
