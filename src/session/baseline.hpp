#pragma once
// `mmprof baseline` and `mmprof trace` as an application, without a terminal: one run of
// mmprof's loader (fresh, resumed, configured --like a job, or one rank of a job), a user's own
// job after `--`, or N ranks started on this host. The CLI declares its options into
// BaselineRequest (cli/baseline) and prints the outcome.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/baseline.hpp"
#include "session/run_options.hpp"

namespace mmprof::session {

struct BaselineRequest {
  RunOptions run;
  bool json = false;   // --json: summary.json on stdout, so no progress on stderr
  std::string resume;  // --resume RUN: continue that interrupted run (a new run directory)
  // A user's own job after `--` (docs/architecture.md): run and observed instead of mmprof's
  // loader.
  std::vector<std::string> command;
  std::optional<int> steps, warmup_steps;  // also phases.steps / phases.warmup_steps
  std::optional<double> duration_s;        // a job: measured seconds, then it is stopped
  std::string loader;                      // a job: which DataLoader to follow
  std::vector<std::string> env;            // a job: NAME=VALUE added to its environment
  std::string like;  // --like RUN: mmprof's loader configured to mimic the job measured in RUN
  std::optional<int> nproc_per_node;  // start N ranks on this host (session/ranks.hpp)
};

// Makes one measured run and writes its run directory: run_baseline, or a variant of it such as
// run_traced_baseline.
using BaselineRunner = Summary (*)(const Config&, const Dataset&, const BaselineOptions&);

// What a baseline session leaves to show.
struct BaselineOutcome {
  enum class Kind {
    run,  // `summary` is the run directory's
    job,  // `document` is a job's job.json (ranks merged)
    none  // a rank other than 0: rank 0 shows the job
  };
  Kind kind = Kind::none;
  Summary summary{};
  nlohmann::json document{};
  nlohmann::json config_tree{};  // the run's resolved configuration (kind run)
  std::filesystem::path dir{};   // the run or job directory
  int exit_code = 0;
};

// `command` names the default output directory and the command that continues an interrupted
// run; `runner` makes a run of mmprof's loader (a job is traced when it is not run_baseline).
BaselineOutcome run_baseline_session(const BaselineRequest& request,
                                     const std::vector<std::string>& argv,
                                     const std::string& command = "baseline",
                                     BaselineRunner runner = run_baseline);

}  // namespace mmprof::session
