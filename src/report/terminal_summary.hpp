#pragma once
// The terminal's summaries of a run and of a job of several ranks: pure functions of what a run
// wrote (its summary and the run's resolved configuration; job.json). Every n/a says why
// (docs/metrics.md, "Terminal summary").
#include <nlohmann/json.hpp>
#include <string>

#include "mmprof/summary.hpp"

namespace mmprof::report {

// The compact human summary of a run: summary.json and manifest.json's "config" -> text.
std::string format_summary(const Summary& summary, const nlohmann::json& config);

// The job's summary: the ranks side by side, the slowest rank and why.
std::string format_job_summary(const nlohmann::json& job);

// `text` with each line longer than `width` columns (UTF-8 characters) broken at spaces, its
// continuation lines indented two more than it; a word longer than the room stays whole. Width 0
// leaves the text as it is.
std::string wrap_lines(const std::string& text, size_t width);

}  // namespace mmprof::report
