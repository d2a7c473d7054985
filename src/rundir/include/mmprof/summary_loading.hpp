#pragma once
// summary.json's parts about how the data was loaded, as types (mmprof/summary.hpp holds them):
// where the bytes came from (locality), the delivery order's randomness (shuffle), the reads'
// pattern, failures the loader survived (reliability, and the resume record of a restarted run),
// the first batch of each epoch (epoch_boundary) and the trace written beside the summary. The
// producers fill them (run/ for mmprof's loader, external/ for a user's job); how each figure is
// measured: docs/metrics.md. A figure that was not measured is empty (null in the file).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmprof/summary_resources.hpp"

namespace mmprof {

// One loader phase's bytes and page cache (locality.phases.<phase>).
struct LocalityPhase {
  std::string prepared;  // what data.cache did before it: "as-is", "read", "evicted"
  double prepare_s = 0;
  // Fractions of the dataset the page cache held: before the phase (empty for a remote dataset),
  // when its measured window opened, after it.
  std::optional<double> resident_before, resident_at_window, resident_after;
  // The loader's own count of what it read, and the device's read_bytes in the phase window.
  std::optional<uint64_t> loader_bytes, device_bytes;
  std::optional<double> page_cache_fraction;  // 1 - device / loader bytes, within [0, 1]
  // A remote dataset's: bytes over HTTP, the span its reads took, their rate, requests retried.
  std::optional<uint64_t> network_bytes;
  std::optional<double> read_span_s, network_mb_per_s;
  std::optional<uint64_t> read_retries;
  uint64_t pages_left_resident = 0;  // data.cache cold: pages the eviction could not drop
};

// locality: where mmprof's loader's bytes came from; absent for a user's job.
struct Locality {
  std::string source = "local";  // or "network": an http(s) data.path
  std::string cache;             // data.cache: as-is, warm, cold
  uint64_t dataset_files = 0, dataset_bytes = 0;
  uint64_t residency_files = 0;  // the files residency was measured on
  std::optional<double> host_memory_mib;
  std::optional<bool> fits_in_ram;  // the dataset in the host's memory
  std::string url;                  // a remote dataset's root
  std::string note;
  std::string ram_note;  // a local dataset that fits in the host's memory
  std::map<std::string, LocalityPhase, std::less<>> phases;

  bool network() const noexcept { return source == "network"; }
  bool cold() const noexcept { return cache == "cold"; }
  const LocalityPhase* phase(std::string_view name) const;
};

// shuffle: the pipeline phase's delivery order against a global permutation
// (stats/shuffle_quality.hpp); the ratio and correlation are empty below 3 samples or without
// two in a batch.
struct ShuffleFigures {
  uint64_t samples = 0;
  std::optional<double> gap_ratio, order_correlation;
};

// read_pattern: the pipeline phase's media reads.
struct ReadPattern {
  std::string phase;
  uint64_t media_reads = 0;
  std::optional<double> sequential_fraction;  // reads that continued the previous one
  std::optional<double> kib_per_sample;
};

// reliability: what mmprof's loader survived; absent (null) for a user's job.
struct Reliability {
  int64_t skipped_samples = 0;
  int64_t rejected_members = 0;  // refused by the dataset index
  int64_t ignored_files = 0;     // neither samples nor captions
  int64_t respawns = 0, retries = 0, hung_workers = 0;
  std::vector<std::string> worker_faults;
};

// reliability.resume: a run resumed from an interrupted one (mmprof baseline --resume).
struct ResumeRecord {
  std::string from;  // the interrupted run's directory
  std::string phase;
  uint64_t start_batch_id = 0;
  int64_t start_epoch = 0;
  int64_t measured_steps_before = 0;
  double time_to_first_batch_ms = 0;  // from the restart
  double loader_time_to_first_batch_ms = 0;
};

// The first batch of an epoch against the steady batches of the same size: one phase of mmprof's
// loader, or a user's job's loop.
struct BoundaryJudgement {
  int64_t boundaries = 0;          // epoch-first batches among the measured steps
  std::optional<double> stall_ms;  // their mean wait
  std::optional<double> steady_wait_ms, excess_ms;
  double threshold_ms = 0;  // excess above which it is a stall
  std::optional<bool> stall;
  std::string verdict;
  // mmprof's loader only: the batches' size, what the workers took to fill them, the wait beyond
  // that, and the steady batches' hand-over noise.
  std::optional<int64_t> batch_size;
  std::optional<double> fill_ms, unexplained_ms, noise_ms;
};

// epoch_boundary: mmprof's loader judges each phase (the pipeline phase's verdict is the
// run's); a job's is its loop's, flat in the part.
struct EpochBoundaryFigures {
  std::optional<bool> persistent_workers;
  std::optional<int64_t> batches_per_epoch;
  std::map<std::string, BoundaryJudgement, std::less<>> phases;  // mmprof's loader
  std::optional<BoundaryJudgement> loop;                         // a user's job

  // The run's judgement: the job's loop, or the pipeline phase's (none before it ran).
  const BoundaryJudgement* headline() const;
};

// NVML's readings of GPU 0 over a phase whose decode was placed on the device: utilisation
// averaged, memory at its peak; or why there were none.
struct NvmlFigures {
  std::string reason;  // NVML unavailable: why (the other figures are then absent)
  std::string gpu, source;
  int64_t readings = 0;
  std::optional<double> decoder_util_pct, jpeg_util_pct, sm_util_pct, memory_bw_util_pct;
  std::optional<double> memory_used_mib, process_memory_mib;
};

// What the loader took from the step's compute: its p50 with the loader running against the
// compute phase alone; empty for a step that computes nothing (why_null says so).
struct ComputeInflation {
  std::optional<double> compute_phase_p50_ms, end_to_end_p50_ms, pct;
  std::string why_null;
};

// decode_placement: where mmprof's loader decoded (cpu workers, or the main process and its
// backend) and what the main process's decode cost per batch (docs/gpu.md); not for a job.
struct DecodePlacement {
  std::string where, phase;
  TimeSpread device_decode_ms;  // per batch, in the main process
  int64_t cpu_fallbacks = 0;
  std::string cpu_fallback_reason;
  std::optional<NvmlFigures> nvml;
  ComputeInflation compute_inflation;
};

// One epoch as a rank's sampler plans it: its samples and batches (steps).
struct PlannedEpoch {
  int64_t epoch = 0, samples = 0, batches = 0;
};

// dist: a rank of a multi-rank run of mmprof's loader (run/phase_runner.hpp); absent on one rank.
struct DistRank {
  int64_t rank = 0, world_size = 1;
  std::string sync;   // dist.sync: none, barrier, allreduce
  std::string group;  // the process group, as it describes itself
  std::string phase;  // where the sync time was measured; empty (null): no loader phase ran
  std::optional<double> sync_ms_total, sync_fraction;  // of that phase's steps
  // Every epoch a permutation deals alike: one; streamed shards are dealt anew each epoch: the
  // first few, which job.json compares across the ranks.
  std::vector<PlannedEpoch> epochs;
};

// One sample class of mmprof's loader's stage_breakdown (by_class), or the classes sharing a
// modality, format or resolution bucket (by_modality, by_format, by_resolution): its samples'
// mean stage times and its share of all decode time.
struct SampleClassFigures {
  std::string label;  // "class" in the file: "webp images >8 MP", "webp", "<=2 MP"
  int64_t samples = 0;
  uint64_t bytes = 0;
  double read_ms_mean = 0, decode_ms_mean = 0, decode_ms_p50 = 0, decode_ms_p90 = 0;
  double augment_ms_mean = 0, decode_ms_total = 0, source_megapixels_mean = 0;
  std::optional<double> decode_share;        // of all decode time; empty when there was none
  std::string modality, format, resolution;  // by_class only (the other lists leave them out)
};

// stage_breakdown: the pipeline phase's samples by class (run/stage_breakdown.hpp); each list
// slowest mean decode first. Not for a job.
struct StageBreakdownFigures {
  std::string phase;
  int64_t samples = 0;
  double decode_ms_total = 0;
  std::vector<double> resolution_buckets_megapixels;  // upper bounds of the buckets
  std::vector<SampleClassFigures> by_modality, by_format, by_resolution, by_class;
  // The slowest class by mean decode, against the mean of every other sample (empty when it is
  // the only class), and the class with the largest share of decode time.
  SampleClassFigures slowest;
  std::optional<double> rest_decode_ms_mean, times_rest;
  SampleClassFigures largest_share;
};

// One loader worker's load over the measured window: mmprof's loader's (workers_balance) or a
// job's DataLoader worker (each rank's workers).
struct WorkerStats {
  int worker = -1;                   // -1: loading in the main process (num_workers=0)
  std::vector<int> pids;             // a job: one per iterator without persistent workers
  int64_t batches = 0, samples = 0;  // batches that started (a job) or were delivered in the window
  std::optional<uint64_t> bytes;     // media + caption bytes read (mmprof's loader; a job: null)
  double busy_ms = 0;                // the worker's time on its batches that fell inside the window
  std::optional<double> busy_fraction;  // busy_ms / the window (at most 1: one process)
  // fetch: one batch in the worker (a job's fetch; mmprof: its samples' read + decode + augment
  // and its collate). getitem: one sample (a job's __getitem__; mmprof: read + decode + augment).
  std::optional<double> fetch_mean_ms, getitem_p50_ms, getitem_p90_ms;
  std::vector<std::pair<std::string, double>> slowest_items;  // (index or key, ms), at most 3
  // mmprof's loader: the share of its samples in the run's slowest sample class, and busy_ms's
  // two parts (its samples' stages, its batches' collate; absent for a job).
  std::optional<double> slowest_class_share, stage_ms, collate_ms;
};

// How evenly the workers shared the work, judged by measure/worker_balance.hpp's rules.
struct WorkerBalance {
  std::vector<WorkerStats> workers;   // by worker id
  std::optional<double> busy_spread;  // max - min busy fraction
  double busy_spread_limit = 0;       // the rule's limit on it
  std::optional<double> busy_max_over_median;
  bool imbalanced = false;
  std::vector<std::string> flags;  // which rule fired
  std::string likely_cause;        // empty when none is visible in the records
  // idle_workers | batch_sizes | slow_sample_class | slow_worker | slow_fetches | out_of_order |
  // uneven_work
  std::string cause_kind;
};

// trace: the trace file written beside the summary.
struct TraceFigures {
  std::string file;
  uint64_t events = 0, recorded_events = 0, dropped_events = 0, max_events = 0, gpu_events = 0;
  // mmprof's loader: every k-th batch traced, and the flow arrows; a job's trace says its source.
  std::optional<uint64_t> sample_every, flows;
  std::string source;
};

}  // namespace mmprof
