#pragma once
// summary.json ("mmprof.summary/2"), built in one place from its parts. Each part is a value
// made by the layer that measured it: the phases and their latencies (run/phase_metrics),
// memory, CPU and I/O (the resource sampler's aggregate), the GPU block (measure/gpu_block), the
// worker-fault tally and resume record (run/reliability, run/resume), the epoch boundary
// (run/epoch_boundary), the trace counts (trace/) and a user's job (external/). A part left null
// is written as null, except `trace`, `resume`, `job`, `stage_breakdown` and `workers_balance`,
// which only some runs have.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::rundir {

struct SummaryParts {
  std::string source = "mmprof";    // mmprof (its own loader) | external (a user's own job)
  std::string status = "complete";  // complete | failed | interrupted
  std::string message;              // why, when not complete
  nlohmann::json phases, throughput, stall_fraction, time_to_first_batch_ms, latency;
  nlohmann::json memory, cpu, io;
  nlohmann::json gpu, gpu_unavailable;
  nlohmann::json pin_mode;  // "pinned", or "pageable: <why>"; null for a user's job
  // Where mmprof's loader decoded (cpu workers, or the main process and its backend) and the
  // main process's decode per batch (docs/gpu.md); null for a user's job.
  nlohmann::json decode_placement;
  nlohmann::json errors;
  nlohmann::json reliability, resume;
  nlohmann::json epoch_boundary;
  // mmprof's own loader (run/): stage times by sample class, and the load of each worker.
  nlohmann::json stage_breakdown, workers_balance;
  nlohmann::json trace;
  nlohmann::json locality;      // where the bytes came from (run/locality.hpp); null for a job
  nlohmann::json dist;          // a rank of a multi-rank run (run/phase_runner.hpp); null on one
  nlohmann::json shuffle;       // the delivery order's randomness (stats/shuffle_quality.hpp)
  nlohmann::json read_pattern;  // sequential reads and read sizes of the pipeline phase
  // A user's own job (source external): the command and how it ended, the hook's status, the
  // DataLoader configuration, per-rank and per-worker figures (external/).
  nlohmann::json job;
};

nlohmann::json summary_json(const SummaryParts& parts);

// Marks the summary.json of `run` (when it has one: a run killed outright has none) as resumed
// by `resumed_by`: status "resumed" and resumed_by, the rest as it was.
void mark_summary_resumed(const std::filesystem::path& run, const std::string& resumed_by);

}  // namespace mmprof::rundir
