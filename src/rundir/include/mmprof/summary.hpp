#pragma once
// summary.json ("mmprof.summary/2") as a type: both producers (mmprof's own loader, run/, and a
// user's job, external/) fill a Summary, RunDir reads one back (mmprof/run_dir.hpp), and every
// reader (report, ab, the job merge) takes its figures from the type, never by key. The headline
// figures, memory, CPU, I/O, the GPU and the error tally are typed; the other parts are JSON
// values made by the layer that measured them (the worker-fault tally, the trace counts, a user's
// job), each written under its own key. Adding a figure: docs/architecture.md, "Add a
// summary figure".
#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmprof/summary_job.hpp"
#include "mmprof/summary_loading.hpp"
#include "mmprof/summary_resources.hpp"

namespace mmprof {

// One phase's rates, throughput.<phase> in summary.json. A rate is empty ("not measured", null in
// the file) when the phase did not run or its window was empty; why_null says why when the
// producer knows (a user's job: mmprof runs neither its pipeline nor its step alone).
struct PhaseRates {
  std::optional<double> samples_per_s, batches_per_s, mb_per_s;
  // mmprof's loader, pipeline and end_to_end: the mean samples of a delivered batch.
  std::optional<double> samples_per_batch;
  // A user's job, end_to_end: samples over the loop's wall time, its first batch included.
  std::optional<double> samples_per_s_wall;
  std::string why_null;
};

struct Throughput {
  PhaseRates compute, pipeline, end_to_end;
  // DS-Analyzer's prediction of end-to-end samples/s: the slower of the pipeline and the compute
  // ceiling; empty unless both ran.
  std::optional<double> predicted_end_to_end;

  // The rates of the phase named `phase` (compute, pipeline, end_to_end); nullptr for another
  // name (a phase a run does not have: nothing measured).
  const PhaseRates* phase(std::string_view phase) const noexcept;
  PhaseRates* phase(std::string_view phase) noexcept;
};

// phases.<phase>: what a phase that ran counted in its measured window (a phase that did not run
// is empty, null in the file; a user's job runs only its own loop, end_to_end).
struct PhaseCounts {
  int64_t steps = 0, batches = 0, samples = 0;
  std::optional<double> time_to_first_batch_ms;
  uint64_t bytes = 0;
  double window_s = 0;
  int64_t warmup_steps = 0;
  // mmprof's loader only: the warm-up's time, failed samples, the loader threads' page faults.
  double warmup_s = 0;
  int64_t failures = 0;
  std::optional<double> minflt_per_sample;
  int64_t majflt = 0;
};

// latency_ms: the step's figures from the end-to-end phase (the pipeline when no step ran), the
// per-sample stages from the pipeline phase (a user's job: its loop's own).
struct Latency {
  std::string phase;  // where step, wait, h2d and sync come from; empty (null): no phase ran
  TimeSpread step, wait, compute, h2d;
  TimeSpread sync;           // mmprof's loader: a rank's collective wait (a job's has none)
  std::string stages_phase;  // where the stages come from; empty (null): none ran
  std::map<std::string, TimeSpread, std::less<>> stages;  // read, decode, augment, collate, pin;
                                                          // a job's getitem and fetch
  // A user's job: each transform inside __getitem__ (augment is their sum), and whether a getitem
  // figure is one __getitems__ call's (a batch) rather than one sample's.
  std::map<std::string, TimeSpread, std::less<>> transforms;
  bool getitem_per_call = false;

  // The stage named `name`; an empty one (nothing measured) for a stage the run has not.
  const TimeSpread& stage(std::string_view name) const;
};

struct Summary {
  std::string source = "mmprof";    // mmprof (its own loader) | external (a user's own job)
  std::string status = "complete";  // complete | failed | interrupted | resumed
  std::string message;              // why, when not complete
  std::string resumed_by;           // status resumed: the run that continued this one

  Throughput throughput;
  // The share of the end-to-end step spent waiting for the batch; empty without steps.
  std::optional<double> stall_fraction;
  // The pipeline's first batch (mmprof's loader), the loop's first batch (a user's job).
  std::optional<double> time_to_first_batch_ms;

  Latency latency;  // latency_ms in the file
  // compute, pipeline and end_to_end, each empty when it did not run.
  std::map<std::string, std::optional<PhaseCounts>, std::less<>> phases;
  // "pinned", or "pageable: <why>" ("" before a loader phase ran); empty (null) for a user's job.
  std::optional<std::string> pin_mode;
  MemoryPeaks memory;
  CpuUse cpu;
  IoUse io;
  ErrorTally errors;
  std::optional<GpuFigures> gpu;  // empty: not measured (gpu_unavailable says why, when known)
  std::string gpu_unavailable;

  // How the data was loaded (mmprof/summary_loading.hpp). reliability and epoch_boundary are
  // written null when empty; the others only some runs have, and are left out when empty.
  std::optional<Reliability> reliability;              // null for a user's job
  std::optional<ResumeRecord> resume;                  // written as reliability.resume
  std::optional<EpochBoundaryFigures> epoch_boundary;  // null for a job the hook did not see
  std::optional<TraceFigures> trace;
  std::optional<Locality> locality;  // where the bytes came from (run/locality.hpp); not a job's
  std::optional<ShuffleFigures> shuffle;            // the pipeline phase's delivery order
  std::optional<ReadPattern> read_pattern;          // sequential reads and read sizes of that phase
  std::optional<DecodePlacement> decode_placement;  // where mmprof's loader decoded
  std::optional<DistRank> dist;                     // a rank of a multi-rank run
  // mmprof's loader's pipeline phase: stage times by sample class, and the load of each worker.
  std::optional<StageBreakdownFigures> stage_breakdown;
  std::optional<WorkerBalance> workers_balance;

  // A user's own job (source external; mmprof/summary_job.hpp): the command and how it ended,
  // the hook's status, the DataLoaders, per-rank and per-worker figures (external/).
  std::optional<JobFigures> job;

  bool external() const noexcept { return source == "external"; }
  // Whether the phase named `phase` ran.
  bool ran(std::string_view phase) const;
  // What the job part keeps as the hook recorded it (each DataLoader's configuration and
  // overrides) with its key path in summary.json: to tell which part a figure came from.
  std::vector<std::pair<std::string, const nlohmann::json*>> parts() const;
};

// summary.json's contents (with its schema id).
nlohmann::json to_json(const Summary& s);
// The Summary in `j` (an upgraded, schema-checked summary.json); throws InputError naming `file`
// when a typed figure holds something else than its type (a string where a rate belongs).
Summary summary_from_json(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace mmprof
