#pragma once
// Analysis of one run directory: pure functions from what the run wrote to findings. Nothing is
// re-measured; every figure below names the summary key (or file) it comes from.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "report/inputs.hpp"

namespace mmprof::report {

// TensorFlow Profiler's input-pipeline analyzer: the share of step time spent waiting for
// input is NOT input-bound below 5 %, MODERATELY below 20 %, HIGHLY from 20 % on
// (kModeratelyInfeedBoundThresholdInPercent / kHighlyInfeedBoundThresholdInPercent in
// tensorflow/core/profiler/convert/op_stats_to_input_pipeline_analysis.cc).
constexpr double kModeratelyInputBound = 0.05;
constexpr double kHighlyInputBound = 0.20;
// A run is transfer-bound when host-to-device copies take this share of the step or more.
constexpr double kTransferBoundShare = 0.20;
// Measured end to end below this fraction of min(pipeline, compute): the two interfere.
constexpr double kInterferenceRatio = 0.90;
// Resource saturation thresholds (fractions of what the machine offers).
constexpr double kCpuSaturated = 0.85;
// CPU-contended: the workers wait on a run queue (runnable, no CPU free) this share of their wall
// time or more (summary cpu.run_queue_delay.workers_mean_fraction). A CPU-bound worker that waits
// a share f runs only 1 - f of the time, so 10 % costs it at least 10 % of its rate: an effect as
// large as the changes an A/B is asked to find, and far above what an idle host shows (wake-up
// latency of microseconds per wake-up, well under 1 % of wall time).
constexpr double kCpuContended = 0.10;
// A loading process (a worker, or the main process when it loads) on a CPU this share of its wall
// time or more computes: more of them need more cores. One off CPU at least kOffCpu of its time
// waits on I/O, a sleep or a lock: another one costs the host only what one of them used.
constexpr double kLoaderCpuBound = 0.70;
constexpr double kLoaderOffCpu = 0.50;
// What the loading processes did is established only when samples saw them over at least this
// share of the measured window, summed over the processes of each worker slot.
constexpr double kLoaderObserved = 0.50;
constexpr double kStorageSaturated = 0.80;
constexpr double kMemoryPressure = 0.90;
constexpr double kGpuSaturated = 0.90;  // kernels cover this share of the GPU window

// "not" | "moderately" | "highly"
std::string input_bound_level(double stall_fraction);

// {primary, input_bound, stall_fraction, compute_share, h2d_share, why}. primary is
// input-bound | transfer-bound | compute-bound, or pipeline-only when no step ran.
nlohmann::json classify(const Summary& summary);

// {predicted_samples_per_s, measured_samples_per_s, ratio, interference}; nulls when a phase
// did not run.
nlohmann::json prediction(const Summary& summary);

// Caveats for phase throughputs in an order steady state cannot give: end to end above the
// pipeline's own rate or above the compute ceiling (a step consumes no faster than the pipeline
// feeds it, nor faster than it computes alone). [{id, text, metric, ratio}]; empty when the order
// is possible or a phase did not run. Printed wherever those throughputs are (terminal, report).
nlohmann::json ordering_caveats(const Summary& summary);

// Per-batch cost of each stage (read, decode, augment, collate, ipc, pin, h2d) and the stage
// that limits the pipeline: {per_batch_ms{...}, shares{...}, limit, basis, samples_per_batch,
// explained_ms, model_overshoot_ms, note}. Per-sample stages scale with the mean DELIVERED batch;
// when they explain more than the measured batch period, ipc is null and `note` says why.
nlohmann::json attribute_stages(const Summary& summary, const nlohmann::json& manifest);

// CPU, storage, network, memory and GPU against what the manifest says the machine has:
// {cpu{...}, storage{...}, network{...}, memory{...}, gpu{...}, limit}. cpu.idle_cores is idle on
// the host (cpu.host), not only unused by the run; cpu.contended: workers waiting to run.
// network: a remote dataset's (locality.source network), saturated when `stages` (from
// attribute_stages()) names read as the limit: its read stage is a wait on HTTP transfers.
nlohmann::json attribute_resources(const Summary& summary, const nlohmann::json& manifest,
                                   const nlohmann::json& stages = nlohmann::json());

// One sentence on CPU from attribute_resources()'s cpu part: the run's use, the host's, pressure,
// the workers' run-queue delay and whether that is contention.
std::string cpu_text(const nlohmann::json& cpu);

// Everything above plus observed facts (each with metric and value) for one run.
nlohmann::json analyze_run(const RunData& run);

}  // namespace mmprof::report
