#pragma once
// Writes a run directory (mmprof/run_dir.hpp): the streamed files (steps, stages, errors,
// digests, resources, host) appended and flushed as the run goes, so an interrupted run keeps
// what it measured, and the JSON files written whole and atomically. Every producer of runs
// (a baseline of mmprof's loader, a user's own job) writes through this class.
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmprof/run_dir.hpp"
#include "mmprof/summary.hpp"
#include "probe/resource_usage.hpp"
#include "rundir/csv_schema.hpp"
#include "rundir/output_dir.hpp"
#include "util/files.hpp"

namespace mmprof::rundir {

struct RunWriterOptions {
  // Replace a run already in the directory (its mmprof files removed first); refused otherwise.
  bool force = false;
  // A user's own job: stages.csv gets the `getitem_ms` column (its hook times the whole
  // `__getitem__`) instead of mmprof's probe columns (format, source size), and stages.csv and
  // steps.csv a `rank` column (a torchrun job's files hold every rank's rows).
  bool job = false;
};

class RunWriter {
 public:
  // Claims `dir` (rundir/output_dir.hpp: created, locked while the writer lives, refused when it
  // holds anything unless `force`) and creates the streamed files with their headers. Throws
  // UsageError for a directory that cannot be claimed, OutputError when it cannot write.
  explicit RunWriter(std::filesystem::path dir, RunWriterOptions options = {});
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path file(const char* name) const { return dir_ / name; }

  void step(const StepRow& row);
  void stages(const std::vector<StageRow>& rows);  // one write for a batch's samples
  void error(const nlohmann::json& line);
  void digest(const DigestRow& row);
  // Its resources.csv rows and host.csv row. The sampler's thread calls this while the run's
  // thread calls the writers above, so it formats into a buffer of its own.
  void resources(const Snapshot& snapshot);

  // Frees the room kept for the last files of a run (below); the first failed streamed write
  // does it, and so does a failed run before it keeps what it measured, so that summary.json,
  // the manifest and the checkpoint still fit on a full disk.
  void release_reserve() noexcept;

  void manifest(const nlohmann::json& manifest) const;
  // Writes summary.json.
  void summary(const Summary& summary) const;
  void steady(const nlohmann::json& steady) const;

 private:
  OutputDir out_;
  std::filesystem::path dir_;
  const Schema<StageRow>* stages_schema_;  // with or without getitem_ms
  const Schema<StepRow>* steps_schema_;    // with or without rank
  AppendFile steps_, stages_, errors_, digests_, resources_, host_;
  // A write of a streamed file; a failure (a full disk) releases the reserve for the last files
  // and is rethrown; no streamed write is tried after it (the sampler's thread would take the
  // room back).
  void append(AppendFile& file, std::string_view text);

  std::string row_;          // reused between the run thread's writes
  std::string sampler_row_;  // reused between resources() calls
  // A preallocated file (kReserveBytes) in the run directory while the run writes, deleted when
  // a streamed write fails or the writer ends: a disk that fills during the run then still has
  // room for the summary of what was measured. Empty when the filesystem could not give it.
  std::filesystem::path reserve_;
  std::once_flag released_;
  std::mutex failure_mutex_;
  std::string failure_;  // the first failed streamed write's sentence; empty while none failed
};

}  // namespace mmprof::rundir
