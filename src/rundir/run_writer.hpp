#pragma once
// Writes a run directory (mmprof/run_dir.hpp): the streamed files (steps, stages, errors,
// digests, resources, host) appended and flushed as the run goes, so an interrupted run keeps
// what it measured, and the JSON files written whole and atomically. Every producer of runs
// (a baseline of mmprof's loader, a user's own job) writes through this class.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "probe/resource_usage.hpp"
#include "rundir/csv_schema.hpp"
#include "rundir/summary.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {

class RunWriter {
 public:
  // Creates `dir` (and parents) and the streamed files with their headers. Throws UsageError for
  // a non-empty existing directory that is not a run directory, InputError when it cannot write.
  // `getitem_column`: stages.csv gets the `getitem_ms` column (a user's own job, whose hook times
  // the whole `__getitem__`) instead of mmprof's probe columns (format, source size).
  explicit RunWriter(std::filesystem::path dir, bool getitem_column = false);

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path file(const char* name) const { return dir_ / name; }

  void step(const StepRow& row);
  void stages(const std::vector<StageRow>& rows);  // one write for a batch's samples
  void error(const nlohmann::json& line);
  void digest(const DigestRow& row);
  // Its resources.csv rows and host.csv row. The sampler's thread calls this while the run's
  // thread calls the writers above, so it formats into a buffer of its own.
  void resources(const Snapshot& snapshot);

  void manifest(const nlohmann::json& manifest) const;
  // Writes summary.json from its parts; returns what it wrote.
  nlohmann::json summary(const SummaryParts& parts) const;
  void steady(const nlohmann::json& steady) const;

 private:
  std::filesystem::path dir_;
  const Schema<StageRow>* stages_schema_;  // with or without getitem_ms
  AppendFile steps_, stages_, errors_, digests_, resources_, host_;
  std::string row_;          // reused between the run thread's writes
  std::string sampler_row_;  // reused between resources() calls
};

}  // namespace mmprof::rundir
