#pragma once
// One measured run of a configuration, in three phases (DS-Analyzer's method): `compute` (the
// step on a synthetic in-memory batch: the ceiling), `pipeline` (the loader with no step) and
// `end_to_end` (loader + step); warm-up is excluded from each. Writes the run directory.
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/progress.hpp"
#include "mmprof/summary.hpp"

namespace mmprof {

struct ResumePoint;  // run/resume.hpp
class DistGroup;     // step/dist_group.hpp

// clang-tidy 14 reports its implicit destructor as throwing (through nlohmann::json and
// std::filesystem::path); nothing in it throws.
struct BaselineOptions {                         // NOLINT(bugprone-exception-escape)
  std::filesystem::path out;                     // the run directory
  bool force = false;                            // --force: replace a run already in `out`
  std::vector<std::string> argv;                 // the command line, for the manifest
  nlohmann::json config_tree;                    // the resolved configuration, for the manifest
  ProgressStyle progress = ProgressStyle::none;  // the phases' progress on stderr
  std::filesystem::path repo;  // the user's repository for the manifest (empty: the cwd)
  // `--resume RUN`: loader phases continue from RUN's checkpoint.json; null for a fresh run.
  std::shared_ptr<const ResumePoint> resume;
  // `mmprof trace`: called once the run is over (also when it failed), after every producer of
  // events stopped: writes trace.json and returns summary.json's `trace` part.
  std::function<std::optional<TraceFigures>()> finish_trace;
  // `--like RUN`: the user's job this run stands in for, and how it was configured from it
  // ({run, sets, why, unknown}, into manifest.json "like"); null otherwise.
  nlohmann::json like;
  // A rank of a multi-rank run: its process group (owned by the caller); null on one rank.
  DistGroup* group = nullptr;
};

// Runs the phases and writes manifest.json, summary.json, steps.csv, stages.csv, errors.jsonl.
// Returns what summary.json holds. On a fatal error (a sample under on_error=fail, a dead worker,
// an interrupt) the files keep everything measured so far, summary.json says why, and the error
// is rethrown.
Summary run_baseline(const Config& config, const Dataset& dataset, const BaselineOptions& options);

}  // namespace mmprof
