#include "run/epoch_boundary.hpp"

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

json number_or_null(double v) {
  return std::isnan(v) ? json(nullptr) : json(v);
}

}  // namespace

void EpochBoundaryTally::observe(const std::string& phase, uint64_t batch_id,
                                 uint64_t first_batch_id, size_t batches_per_epoch,
                                 double wait_ms) {
  Waits& w = phases_[phase];
  const bool boundary = batches_per_epoch > 0 && batch_id % batches_per_epoch == 0;
  (boundary && batch_id != first_batch_id ? w.boundary : w.steady).push_back(wait_ms);
}

json EpochBoundaryTally::to_json(bool persistent_workers, size_t batches_per_epoch) const {
  json out = {{"persistent_workers", persistent_workers},
              {"batches_per_epoch", batches_per_epoch},
              {"stall_ms", nullptr}};
  for (const auto& [phase, w] : phases_) {
    std::vector<double> steady = w.steady;
    std::sort(steady.begin(), steady.end());
    const double stall = mean(w.boundary);  // NaN when empty
    const double typical = quantile_sorted(steady, 0.5);
    out[phase] = {{"boundaries", w.boundary.size()},
                  {"stall_ms", number_or_null(stall)},
                  {"steady_wait_ms", number_or_null(typical)},
                  {"excess_ms", number_or_null(stall - typical)}};
  }
  if (out.contains("pipeline")) out["stall_ms"] = out["pipeline"]["stall_ms"];
  return out;
}

}  // namespace mmprof
