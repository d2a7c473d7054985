#pragma once
// The terminal's summaries of a run and of a job of several ranks: pure functions of their JSON
// (summary.json and the run's resolved configuration; job.json). Every n/a says why
// (docs/metrics.md, "Terminal summary").
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::report {

// The compact human summary of a run: summary.json and manifest.json's "config" -> text.
std::string format_summary(const nlohmann::json& summary, const nlohmann::json& config);

// The job's summary: the ranks side by side, the slowest rank and why.
std::string format_job_summary(const nlohmann::json& job);

}  // namespace mmprof::report
