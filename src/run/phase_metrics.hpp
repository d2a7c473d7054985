#pragma once
// What one phase of a baseline measured, and how phases become summary.json's phase, throughput,
// latency, resource and error parts. Pure data and pure functions: the phase runner fills
// PhaseMetrics, summarize() turns them into the summary (mmprof/summary.hpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/loader.hpp"
#include "mmprof/summary.hpp"
#include "probe/resource_usage.hpp"
#include "run/stage_breakdown.hpp"
#include "run/worker_loads.hpp"

namespace mmprof {

struct PhaseMetrics {
  std::string name;  // "compute", "pipeline", "end_to_end"
  bool ran = false;
  int64_t steps = 0;  // measured (optimizer) steps
  int64_t batches = 0, samples = 0;
  uint64_t bytes = 0;                             // media + caption bytes read in the window
  uint64_t read_retries = 0;                      // remote requests retried in the window
  uint64_t continued_reads = 0, media_reads = 0;  // sequential reading (loader.hpp's Batch)
  // From the first read start to the last read end of the window's samples: the span their
  // bytes were read in (a batch delivered early in the window was read before it opens).
  int64_t read_first_ns = INT64_MAX, read_last_ns = 0;
  double window_s = 0;           // from the start of the first measured step to the end of the last
  int64_t window_start_ns = -1;  // the first measured step's start (-1: none yet)
  int64_t window_end_ns = -1;    // the last measured step's end
  double warmup_s = 0;
  int64_t warmup_steps = 0;
  double time_to_first_batch_ms = -1;
  std::vector<double> step_ms, wait_ms, compute_ms, h2d_ms;  // per measured step
  std::vector<double> sync_ms;  // per measured step of a multi-rank run with dist.sync
  std::vector<double> read_ms, decode_ms, augment_ms;  // per measured sample
  std::vector<double> collate_ms, pin_ms;              // per measured batch
  // Decode placed on the device: where (LoaderStats::decode_placement) and, per measured batch
  // with deferred samples, the main process's decode of them.
  std::string decode_placement;
  std::vector<double> device_decode_ms;
  int64_t device_decode_fallbacks = 0;
  std::string device_decode_fallback_reason;
  // Decode placed on the device: NVML's readings of GPU 0 during the measured steps (each a
  // reading's object, or {"reason"} without NVML).
  std::vector<nlohmann::json> nvml_readings;
  int64_t minflt = 0, majflt = 0;   // loader threads, measured samples
  int64_t failures = 0;             // failed samples in the window
  std::vector<uint32_t> delivered;  // the window's samples' dataset indices, in delivery order
  std::vector<uint32_t> delivered_batches;  // how many of them each batch holds
  StageBreakdown classes;                   // stage times by sample class
  WorkerLoads workers;                      // per loader worker

  // A measured batch: its count, failures and per-sample stage timings; pin time only when the
  // batch was copied into pinned memory.
  void add_batch(const Batch& batch, bool pinned);
  // A measured step ran from `t0_ns` to `t_end_ns`: the window now ends there.
  void add_step_span(int64_t t0_ns, int64_t t_end_ns);

  double samples_per_s() const;
  double batches_per_s() const;
  double mb_per_s() const;
  double read_span_s() const;
};

struct RunOutcome {
  std::string status = "complete";  // complete | failed | interrupted
  std::string message;              // why, when not complete
  int64_t error_events = 0;         // lines in errors.jsonl
  int64_t error_samples = 0;        // distinct keys among them
  std::string pin_mode;
  // The step's kind (step.kind): a sleep or no step takes nothing that decode could take, so its
  // lengthening beside the loader is no compute inflation.
  StepKind step_kind = StepKind::none;
};

// The summary's parts from the three phases; a phase that did not run gives nulls. `resources`
// (the sampler's aggregate, windows named after the phases plus "run") fills memory, cpu and
// io; without it they are null. The GPU, reliability, epoch-boundary and trace parts are their
// layers' own.
Summary summarize(const PhaseMetrics& compute, const PhaseMetrics& pipeline,
                  const PhaseMetrics& end_to_end, const RunOutcome& outcome,
                  const ResourceUsage* resources = nullptr);

}  // namespace mmprof
