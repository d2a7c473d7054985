#pragma once
// When staging pays off: for an `mmprof ab` over data.path whose arm is a copy made by `mmprof
// stage` (its stage.json beside the data), the epoch time where the data is against the copy,
// with the effect's 95 % CI, the one-off cost of the copy, and the number of epochs after which
// the copy has paid for itself (docs/report.md).
#include <nlohmann/json.hpp>
#include <optional>

#include "report/inputs.hpp"

namespace mmprof::report {

// One entry per data.path arm: the figures, or `reason` when they cannot be had (no stage.json,
// no throughput metric, no sample count). Empty when the experiment varies no data.path.
nlohmann::json staging_break_even(const nlohmann::json& experiment,
                                  const std::optional<RunData>& base);

}  // namespace mmprof::report
