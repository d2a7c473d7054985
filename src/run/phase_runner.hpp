#pragma once
// The phase loop of a baseline (DS-Analyzer's phases): warm-up by steps and by time, the optional
// steady-state check, then the measured window, step by step. `compute` runs the step alone on a
// synthetic batch; a loader phase takes batches from a BatchSource (the loader) and hands them to
// the step, if any. Time comes from the injected Clock, so the loop is unit-tested with a fake
// clock, a fake source and a fake step; what a step produces goes to the RunRecorder.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "measure/progress.hpp"
#include "mmprof/config.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "run/epoch_boundary.hpp"
#include "run/phase_metrics.hpp"
#include "run/recorder.hpp"
#include "run/reliability.hpp"
#include "run/resume.hpp"

namespace mmprof {

class Step;
class GpuPhase;
class DistGroup;

// Where a loader phase's batches come from: mmprof's Loader (LoaderSource), or a fake in tests.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Blocks until the next batch is ready; throws SampleError / RunError as Loader::next does.
  virtual const Batch& next() = 0;
  virtual const LoaderStats& stats() const = 0;
  virtual size_t batches_per_epoch() const = 0;
};

class LoaderSource final : public BatchSource {
 public:
  explicit LoaderSource(Loader& loader) : loader_(loader) {}
  const Batch& next() override { return loader_.next(); }
  const LoaderStats& stats() const override { return loader_.stats(); }
  size_t batches_per_epoch() const override { return loader_.batches_per_epoch(); }

 private:
  Loader& loader_;
};

class PhaseRunner {
 public:
  // Every reference must outlive the runner. `dataset_fingerprint` goes into checkpoints.
  PhaseRunner(const Config& config, Clock& clock, RunRecorder& recorder, ProgressLine& progress,
              CheckpointKeeper& checkpoint, uint64_t dataset_fingerprint);

  // The ceiling: `step` alone on one synthetic batch held in memory.
  void compute(PhaseMetrics& phase, Step& step);
  // A loader phase: batches from `source`, each through `step` when there is one. With `gpu`,
  // every measured step's window, waits and copies go to it (the end-to-end phase).
  void loader(PhaseMetrics& phase, BatchSource& source, Step* step, GpuPhase* gpu);

  // The sampler names the source's worker processes (role worker N); `sample`: take a sample
  // now (a new loader), else wait for the next periodic one (replacements inside a window,
  // whose timing must not be disturbed).
  void watch_workers(const BatchSource& source, bool sample);

  // Called with the phase's name when a loader phase's warm-up is over, before its window opens.
  void on_window_begin(std::function<void(const std::string&)> f) {
    on_window_begin_ = std::move(f);
  }

  // A multi-rank run's process group (none on one rank): each phase starts with a barrier, a
  // warm-up bounded by phases.warmup_s ends when every rank's has, and dist.sync follows every
  // step of the phases with a step (its time is the step's sync_ms, inside step_ms).
  void use_group(DistGroup* group) noexcept { group_ = group; }

  const std::string& pin_mode() const noexcept { return pin_mode_; }
  ReliabilityTally& reliability() noexcept { return reliability_; }
  const EpochBoundaryTally& epoch_boundary() const noexcept { return epoch_boundary_; }
  size_t batches_per_epoch() const noexcept { return batches_per_epoch_; }

 private:
  bool warming(int64_t step, int64_t t_phase_start);
  void one_compute_step(const Batch& batch, Step& step, PhaseMetrics* record);
  void one_loader_step(BatchSource& source, Step* step, const std::string& phase,
                       PhaseMetrics* record, GpuPhase* gpu, int64_t index);
  const Batch& next_batch(BatchSource& source, const std::string& phase);
  void start_phase();
  double sync_after_step(const std::string& phase);  // ms, NaN without a sync
  void check_steady_state(const PhaseMetrics& phase, const std::function<void()>& step);
  double elapsed_s(int64_t since) { return static_cast<double>(clock_.now_ns() - since) / 1e9; }

  const Config& config_;
  Clock& clock_;
  RunRecorder& recorder_;
  ProgressLine& progress_;
  CheckpointKeeper& checkpoint_;
  const uint64_t dataset_fingerprint_;
  std::string pin_mode_;
  int worker_restarts_ = 0;
  size_t batches_per_epoch_ = 0;
  uint64_t first_batch_id_ = 0;  // of the current loader phase
  ReliabilityTally reliability_;
  EpochBoundaryTally epoch_boundary_;
  nlohmann::json steady_ = nlohmann::json::object();
  std::function<void(const std::string&)> on_window_begin_;
  DistGroup* group_ = nullptr;
};

}  // namespace mmprof
