#pragma once
// What one baseline run records, apart from the timing of its steps (run/phase_runner.hpp): the
// run directory's streamed files, the resource sampler over the process tree, and the tally of
// bad samples. The phase runner hands it each step and batch; BaselineRun asks it for the
// summary's resource and error parts at the end.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "probe/procfs.hpp"
#include "probe/resource_sampler.hpp"
#include "rundir/run_writer.hpp"

namespace mmprof {

class RunRecorder {
 public:
  // `clock` must outlive the recorder; it stamps the resource samples.
  // `out` is claimed by its RunWriter (`force`: replace a run already there).
  RunRecorder(const std::filesystem::path& out, bool force, const Dataset& dataset, Clock& clock,
              int sample_interval_ms);

  rundir::RunWriter& writer() noexcept { return writer_; }
  ResourceSampler& sampler() noexcept { return sampler_; }

  // A phase boundary: resources are measured over the same window as the phase's throughput
  // (warm-up excluded), and the trace marks it.
  void begin_window(const std::string& phase);
  void end_window(const std::string& phase);

  // One step of `phase` (index `step`, started at `t0`); h2d is NaN (an empty h2d_ms cell)
  // when the step made no host-to-device copy.
  // NaN h2d_ms / sync_ms: no copy / no sync (empty cells).
  void step(const std::string& phase, int64_t step, int64_t t0, double wait_ms, double h2d_ms,
            double compute_ms, double step_ms, int64_t samples, uint64_t bytes, double sync_ms);
  // A measured batch's samples (stages.csv).
  void samples(const std::string& phase, const Batch& batch, int64_t step);
  void digest(const std::string& phase, const Batch& batch);
  // A sample that failed (stage, message) in `phase`, and a member the dataset index refused.
  void sample_error(const SampleFailure& f, const std::string& phase, uint64_t batch,
                    int64_t epoch);
  void rejected_member(const RejectedEntry& entry);
  void ignored_file(const IgnoredFile& entry);  // listed, not counted as an error

  int64_t error_events() const noexcept { return error_events_; }
  int64_t error_samples() const noexcept { return static_cast<int64_t>(error_keys_.size()); }

 private:
  const Dataset& dataset_;
  rundir::RunWriter writer_;
  procfs::ProcFs procfs_;
  int64_t error_events_ = 0;
  std::set<std::string> error_keys_;
  std::vector<StageRow> stage_rows_;  // reused between batches
  // Declared after the writer and procfs it uses: destroyed (its thread joined) first.
  ResourceSampler sampler_;
};

}  // namespace mmprof
