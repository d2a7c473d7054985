#pragma once
// Writing summary.json: its type and its JSON form are public (mmprof/summary.hpp); this adds
// what only mmprof's own writers do to it.
#include <filesystem>
#include <string>

#include "mmprof/summary.hpp"
#include "stats/descriptive.hpp"

namespace mmprof::rundir {

// A described set of times as the summary holds it (its figures empty when it has no value).
TimeSpread spread_of(const Distribution& d);

// Marks the summary.json of `run` (when it has one: a run killed outright has none) as resumed
// by `resumed_by`: status "resumed" and resumed_by, the rest as it was.
void mark_summary_resumed(const std::filesystem::path& run, const std::string& resumed_by);

}  // namespace mmprof::rundir
