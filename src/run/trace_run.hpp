#pragma once
// `mmprof trace`: a baseline run (run/baseline) with every trace recording point on,
// writing the same run directory plus trace.json (src/trace) and summary.json's `trace` block.
#include <nlohmann/json.hpp>

#include "mmprof/baseline.hpp"

namespace mmprof {

// As run_baseline. The trace arena exists before the first loader forks its workers; trace.json
// is written after every producer stopped, also when the run fails, and summary.json carries
// its `trace` part.
Summary run_traced_baseline(const Config& config, const Dataset& dataset,
                            const BaselineOptions& options);

}  // namespace mmprof
