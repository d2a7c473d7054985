#pragma once
// Chart data drawn from the run's CSV files (not from summary.json, so the charts are an
// independent view of the same measurements): latency CDFs from steps.csv, memory per process
// over time from resources.csv, the slowest samples from stages.csv.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "report/csv_table.hpp"

namespace mmprof::report {

// [[ms, cumulative fraction], ...] at 101 evenly spaced quantiles of `column` over the rows of
// `phase`; empty when the phase has no value.
nlohmann::json latency_cdf(const CsvTable& steps, const std::string& phase,
                           const std::string& column);

// [{process: "main" | "worker N (pid P)" | ..., points: [[s, pss_mb], ...]}], time from the
// first sample, at most `max_points` per process (evenly strided; the last sample is kept).
nlohmann::json memory_series(const CsvTable& resources, size_t max_points = 200);

// The `n` samples of `phase` with the largest read + decode + augment time:
// [{key, worker, read_ms, decode_ms, augment_ms, total_ms, modality}].
nlohmann::json slowest_samples(const CsvTable& stages, const std::string& phase, size_t n);

// Mean of `column` over the rows of `phase` (nullopt without rows): the cross-check of the
// summary's per-stage means.
std::optional<double> column_mean(const CsvTable& table, const std::string& phase,
                                  const std::string& column);
// sum(wait_ms) / sum(step_ms) over `phase`'s rows of steps.csv.
std::optional<double> stall_from_steps(const CsvTable& steps, const std::string& phase);

}  // namespace mmprof::report
