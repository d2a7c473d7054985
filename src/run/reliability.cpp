#include "run/reliability.hpp"

#include <fmt/format.h>

namespace mmprof {
namespace {

std::string shard_path(const Dataset& dataset, const RejectedEntry& entry) {
  return (dataset.root() / entry.file).string();
}

}  // namespace

void ReliabilityTally::observe(const LoaderStats& live) {
  live_.respawns = live.respawns;
  live_.retries = live.retries;
  live_.hung_workers = live.hung_workers;
  if (live_.worker_faults.size() != live.worker_faults.size()) {
    live_.worker_faults = live.worker_faults;
  }
}

void ReliabilityTally::loader_done() {
  respawns_ += live_.respawns;
  retries_ += live_.retries;
  hung_ += live_.hung_workers;
  faults_.insert(faults_.end(), live_.worker_faults.begin(), live_.worker_faults.end());
  live_ = LoaderStats{};
}

Reliability ReliabilityTally::figures(int64_t skipped_samples, const Dataset& dataset) const {
  Reliability r;
  r.skipped_samples = skipped_samples;
  r.rejected_members = static_cast<int64_t>(dataset.rejected().size());
  r.ignored_files = static_cast<int64_t>(dataset.ignored().size());
  r.respawns = respawns_ + live_.respawns;
  r.retries = retries_ + live_.retries;
  r.hung_workers = hung_ + live_.hung_workers;
  r.worker_faults = faults_;
  r.worker_faults.insert(r.worker_faults.end(), live_.worker_faults.begin(),
                         live_.worker_faults.end());
  return r;
}

nlohmann::json rejection_error_line(const Dataset& dataset, const RejectedEntry& entry) {
  return {{"key", entry.key},
          {"stage", "index"},
          {"message", entry.reason},
          {"phase", "index"},
          {"batch", nullptr},
          {"epoch", nullptr},
          {"file", shard_path(dataset, entry)}};
}

nlohmann::json ignored_line(const Dataset& dataset, const IgnoredFile& entry) {
  return {{"kind", "ignored"}, {"key", nullptr},
          {"stage", "index"},  {"message", entry.reason},
          {"phase", "index"},  {"batch", nullptr},
          {"epoch", nullptr},  {"file", (dataset.root() / entry.file).string()}};
}

void enforce_rejection_policy(const Config& config, const Dataset& dataset) {
  if (config.loader.on_error != OnError::fail || dataset.rejected().empty()) return;
  const RejectedEntry& first = dataset.rejected().front();
  if (!dataset.layout_info().containers) {
    throw RunError(fmt::format("{} refused: {} (loader.on_error=fail)", shard_path(dataset, first),
                               first.reason));
  }
  if (first.key.empty()) {  // damage of the shard itself, not of one member
    throw RunError(fmt::format("{} shard {}: {} (loader.on_error=fail)", dataset.layout_info().name,
                               shard_path(dataset, first), first.reason));
  }
  throw RunError(fmt::format("{} shard {}: member '{}' refused: {} (loader.on_error=fail)",
                             dataset.layout_info().name, shard_path(dataset, first), first.key,
                             first.reason));
}

}  // namespace mmprof
