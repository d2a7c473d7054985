#pragma once
// The keys of summary.json's typed number figures, each a row (key, member) of its struct's table
// (rundir::Field for an optional figure, rundir::Figure for one every run has): the part's writer
// and reader (summary.cpp, summary_parts.cpp, summary_loading.cpp, summary_job.cpp) both go
// through the table, so a key is spelled here once.
#include <array>
#include <cstdint>

#include "mmprof/summary.hpp"
#include "rundir/figure_reader.hpp"

namespace mmprof::rundir {

// ---- the resources and the GPU (summary_parts.cpp) ----

inline constexpr std::array<Field<ProcessMemory, double>, 4> kProcessPeaks = {{
    {"rss_peak_mib", &ProcessMemory::rss_peak_mib},
    {"pss_peak_mib", &ProcessMemory::pss_peak_mib},
    {"uss_peak_mib", &ProcessMemory::uss_peak_mib},
    {"swap_peak_mib", &ProcessMemory::swap_peak_mib},
}};

// The host's and the run's peaks (the unsampled part has the first two only, null).
inline constexpr std::array<Field<MemoryPeaks, double>, 8> kHostPeaks = {{
    {"host_peak_mib", &MemoryPeaks::host_peak_mib},
    {"total_pss_peak_mib", &MemoryPeaks::total_pss_peak_mib},
    {"host_used_peak_mib", &MemoryPeaks::host_used_peak_mib},
    {"host_total_mib", &MemoryPeaks::host_total_mib},
    {"page_cache_peak_mib", &MemoryPeaks::page_cache_peak_mib},
    {"cgroup_memory_current_peak_mib", &MemoryPeaks::cgroup_memory_current_peak_mib},
    {"cgroup_memory_peak_mib", &MemoryPeaks::cgroup_memory_peak_mib},
    {"shm_used_peak_mib", &MemoryPeaks::shm_used_peak_mib},
}};

inline constexpr std::array<Field<ProcessCpu, double>, 4> kProcessCpu = {{
    {"cores", &ProcessCpu::cores},
    {"run_queue_delay_s", &ProcessCpu::run_queue_delay_s},
    {"run_queue_delay_fraction", &ProcessCpu::run_queue_delay_fraction},
    {"observed_fraction", &ProcessCpu::observed_fraction},
}};

inline constexpr std::array<Field<RunQueueDelay, double>, 3> kRunQueueDelay = {{
    {"workers_mean_fraction", &RunQueueDelay::workers_mean_fraction},
    {"workers_max_fraction", &RunQueueDelay::workers_max_fraction},
    {"main_fraction", &RunQueueDelay::main_fraction},
}};

inline constexpr std::array<Field<IoWindow, uint64_t>, 6> kIoCounts = {{
    {"read_bytes", &IoWindow::read_bytes},
    {"write_bytes", &IoWindow::write_bytes},
    {"rchar", &IoWindow::rchar},
    {"wchar", &IoWindow::wchar},
    {"syscr", &IoWindow::syscr},
    {"syscw", &IoWindow::syscw},
}};

inline constexpr std::array<Field<IoWindow, double>, 4> kIoRates = {{
    {"read_mb_per_s", &IoWindow::read_mb_per_s},
    {"rchar_mb_per_s", &IoWindow::rchar_mb_per_s},
    {"minflt_per_sample", &IoWindow::minflt_per_sample},
    {"majflt_per_sample", &IoWindow::majflt_per_sample},
}};

inline constexpr std::array<Field<GpuFigures, double>, 5> kGpuFractions = {{
    {"idle_fraction", &GpuFigures::idle_fraction},
    {"data_wait_idle_fraction", &GpuFigures::data_wait_idle_fraction},
    {"other_idle_fraction", &GpuFigures::other_idle_fraction},
    {"kernel_busy_fraction", &GpuFigures::kernel_busy_fraction},
    {"copy_compute_overlap_fraction", &GpuFigures::copy_compute_overlap_fraction},
}};

// A distribution's figures; p999 is the last (stages have none).
inline constexpr std::array<Field<TimeSpread, double>, 6> kSpread = {{
    {"mean", &TimeSpread::mean},
    {"p50", &TimeSpread::p50},
    {"p90", &TimeSpread::p90},
    {"p99", &TimeSpread::p99},
    {"max", &TimeSpread::max},
    {"p999", &TimeSpread::p999},
}};

// ---- how the data was loaded (summary_loading.cpp) ----

inline constexpr std::array<Field<LocalityPhase, double>, 4> kResidency = {{
    {"resident_before", &LocalityPhase::resident_before},
    {"resident_at_window", &LocalityPhase::resident_at_window},
    {"resident_after", &LocalityPhase::resident_after},
    {"page_cache_fraction", &LocalityPhase::page_cache_fraction},
}};

inline constexpr std::array<Field<LocalityPhase, uint64_t>, 2> kPhaseBytes = {{
    {"loader_bytes", &LocalityPhase::loader_bytes},
    {"device_bytes", &LocalityPhase::device_bytes},
}};

// A remote dataset's phase only.
inline constexpr std::array<Field<LocalityPhase, double>, 2> kNetworkRates = {{
    {"read_span_s", &LocalityPhase::read_span_s},
    {"network_mb_per_s", &LocalityPhase::network_mb_per_s},
}};

inline constexpr std::array<Field<LocalityPhase, uint64_t>, 2> kNetworkCounts = {{
    {"network_bytes", &LocalityPhase::network_bytes},
    {"read_retries", &LocalityPhase::read_retries},
}};

inline constexpr std::array<Figure<Locality, uint64_t>, 3> kDatasetCounts = {{
    {"dataset_files", &Locality::dataset_files},
    {"dataset_bytes", &Locality::dataset_bytes},
    {"residency_files", &Locality::residency_files},
}};

inline constexpr std::array<Field<BoundaryJudgement, double>, 3> kBoundaryWaits = {{
    {"stall_ms", &BoundaryJudgement::stall_ms},
    {"steady_wait_ms", &BoundaryJudgement::steady_wait_ms},
    {"excess_ms", &BoundaryJudgement::excess_ms},
}};

// mmprof's loader's phases only.
inline constexpr std::array<Field<BoundaryJudgement, double>, 3> kBoundaryFill = {{
    {"fill_ms", &BoundaryJudgement::fill_ms},
    {"unexplained_ms", &BoundaryJudgement::unexplained_ms},
    {"noise_ms", &BoundaryJudgement::noise_ms},
}};

inline constexpr std::array<Figure<Reliability, int64_t>, 6> kReliability = {{
    {"skipped_samples", &Reliability::skipped_samples},
    {"rejected_members", &Reliability::rejected_members},
    {"ignored_files", &Reliability::ignored_files},
    {"respawns", &Reliability::respawns},
    {"retries", &Reliability::retries},
    {"hung_workers", &Reliability::hung_workers},
}};

// reliability.resume: where a resumed run started, and how long its first batch took.
inline constexpr std::array<Figure<ResumeRecord, int64_t>, 2> kResumeSteps = {{
    {"start_epoch", &ResumeRecord::start_epoch},
    {"measured_steps_before", &ResumeRecord::measured_steps_before},
}};
inline constexpr std::array<Figure<ResumeRecord, double>, 2> kResumeTimes = {{
    {"time_to_first_batch_ms", &ResumeRecord::time_to_first_batch_ms},
    {"loader_time_to_first_batch_ms", &ResumeRecord::loader_time_to_first_batch_ms},
}};

inline constexpr std::array<Figure<TraceFigures, uint64_t>, 5> kTraceCounts = {{
    {"events", &TraceFigures::events},
    {"recorded_events", &TraceFigures::recorded_events},
    {"dropped_events", &TraceFigures::dropped_events},
    {"max_events", &TraceFigures::max_events},
    {"gpu_events", &TraceFigures::gpu_events},
}};

inline constexpr std::array<Field<TraceFigures, uint64_t>, 2> kTraceSampling = {{
    {"sample_every", &TraceFigures::sample_every},
    {"flows", &TraceFigures::flows},
}};

// decode_placement.nvml: utilisation averaged, memory at its peak.
inline constexpr std::array<Field<NvmlFigures, double>, 6> kNvmlFigures = {{
    {"decoder_util_pct", &NvmlFigures::decoder_util_pct},
    {"jpeg_util_pct", &NvmlFigures::jpeg_util_pct},
    {"sm_util_pct", &NvmlFigures::sm_util_pct},
    {"memory_bw_util_pct", &NvmlFigures::memory_bw_util_pct},
    {"memory_used_mib", &NvmlFigures::memory_used_mib},
    {"process_memory_mib", &NvmlFigures::process_memory_mib},
}};
inline constexpr std::array<Field<ComputeInflation, double>, 3> kComputeInflation = {{
    {"compute_phase_p50_ms", &ComputeInflation::compute_phase_p50_ms},
    {"end_to_end_p50_ms", &ComputeInflation::end_to_end_p50_ms},
    {"pct", &ComputeInflation::pct},
}};

inline constexpr std::array<Figure<PlannedEpoch, int64_t>, 3> kPlannedEpoch = {{
    {"epoch", &PlannedEpoch::epoch},
    {"samples", &PlannedEpoch::samples},
    {"batches", &PlannedEpoch::batches},
}};
inline constexpr std::array<Field<DistRank, double>, 2> kDistSync = {{
    {"sync_ms_total", &DistRank::sync_ms_total},
    {"sync_fraction", &DistRank::sync_fraction},
}};

// stage_breakdown's entries: each class's (or group's) means and decode figures.
inline constexpr std::array<Figure<SampleClassFigures, double>, 7> kClassTimes = {{
    {"read_ms_mean", &SampleClassFigures::read_ms_mean},
    {"decode_ms_mean", &SampleClassFigures::decode_ms_mean},
    {"decode_ms_p50", &SampleClassFigures::decode_ms_p50},
    {"decode_ms_p90", &SampleClassFigures::decode_ms_p90},
    {"augment_ms_mean", &SampleClassFigures::augment_ms_mean},
    {"decode_ms_total", &SampleClassFigures::decode_ms_total},
    {"source_megapixels_mean", &SampleClassFigures::source_megapixels_mean},
}};

// workers_balance.workers[] (and a job rank's workers).
inline constexpr std::array<Field<WorkerStats, double>, 5> kWorkerTimes = {{
    {"busy_fraction", &WorkerStats::busy_fraction},
    {"fetch_mean_ms", &WorkerStats::fetch_mean_ms},
    {"getitem_p50_ms", &WorkerStats::getitem_p50_ms},
    {"getitem_p90_ms", &WorkerStats::getitem_p90_ms},
    {"slowest_class_share", &WorkerStats::slowest_class_share},
}};
inline constexpr std::array<Figure<WorkerStats, int64_t>, 2> kWorkerCounts = {{
    {"batches", &WorkerStats::batches},
    {"samples", &WorkerStats::samples},
}};
// mmprof's loader's workers only.
inline constexpr std::array<Field<WorkerStats, double>, 2> kWorkerBusyParts = {{
    {"stage_ms", &WorkerStats::stage_ms},
    {"collate_ms", &WorkerStats::collate_ms},
}};

// ---- a user's job (summary_job.cpp) ----

// job.ranks[]: steps, the window, throughput, the headline fractions.
inline constexpr std::array<Figure<JobRank, int64_t>, 5> kRankSteps = {{
    {"measured", &JobRank::measured_steps},
    {"warmup_batches", &JobRank::warmup_batches},
    {"capped_batches", &JobRank::capped_batches},
    {"dropped_unfinished", &JobRank::dropped_unfinished},
    {"dropped_epoch_left", &JobRank::dropped_epoch_left},
}};
inline constexpr std::array<Field<JobRank, int64_t>, 2> kRankWindow = {{
    {"start_ns", &JobRank::window_start_ns},
    {"end_ns", &JobRank::window_end_ns},
}};
inline constexpr std::array<Figure<JobRank, double>, 2> kRankWindowTimes = {{
    {"step_ms_total", &JobRank::step_ms_total},
    {"wait_ms_total", &JobRank::wait_ms_total},
}};
inline constexpr std::array<Field<JobRank, double>, 2> kRankRates = {{
    {"samples_per_s", &JobRank::samples_per_s},
    {"samples_per_s_wall", &JobRank::samples_per_s_wall},
}};
inline constexpr std::array<Field<JobRank, double>, 2> kRankFractions = {{
    {"stall_fraction", &JobRank::stall_fraction},
    {"time_to_first_batch_ms", &JobRank::time_to_first_batch_ms},
}};
inline constexpr std::array<Field<EpochGapFigures, double>, 3> kEpochGaps = {{
    {"mean_ms", &EpochGapFigures::mean_ms},
    {"max_ms", &EpochGapFigures::max_ms},
    {"total_ms", &EpochGapFigures::total_ms},
}};

// job.rank_comparison.ranks[].
inline constexpr std::array<Field<RankComparison::Rank, double>, 4> kComparedRank = {{
    {"stall_fraction", &RankComparison::Rank::stall_fraction},
    {"step_p50_ms", &RankComparison::Rank::step_p50_ms},
    {"step_p99_ms", &RankComparison::Rank::step_p99_ms},
    {"samples_per_s", &RankComparison::Rank::samples_per_s},
}};

// job.hook: the hook's files and lines.
inline constexpr std::array<Figure<HookStatus, int64_t>, 4> kHookCounts = {{
    {"files", &HookStatus::files},
    {"lines", &HookStatus::lines},
    {"cut_lines", &HookStatus::cut_lines},
    {"unknown_records", &HookStatus::unknown_records},
}};

// job.cow[]: the fitted USS slope and its interval.
inline constexpr std::array<Field<CowGrowth, double>, 4> kCowSlopes = {{
    {"slope_mib_per_min", &CowGrowth::slope_mib_per_min},
    {"slope_ci95_low_mib_per_min", &CowGrowth::slope_ci95_low_mib_per_min},
    {"slope_ci95_high_mib_per_min", &CowGrowth::slope_ci95_high_mib_per_min},
    {"growth_mib", &CowGrowth::growth_mib},
}};

// ---- the phases (summary.cpp) ----

// phases.<phase>: a job's loop counts no warm-up time, failures or faults of its own.
inline constexpr std::array<Figure<PhaseCounts, int64_t>, 4> kPhaseSteps = {{
    {"steps", &PhaseCounts::steps},
    {"batches", &PhaseCounts::batches},
    {"samples", &PhaseCounts::samples},
    {"warmup_steps", &PhaseCounts::warmup_steps},
}};
inline constexpr std::array<Figure<PhaseCounts, int64_t>, 2> kLoaderCounts = {{
    {"failures", &PhaseCounts::failures},
    {"majflt", &PhaseCounts::majflt},
}};

}  // namespace mmprof::rundir
