#pragma once
// The load of each of mmprof's loader workers over a phase's measured batches: samples, bytes,
// busy time (its samples' read + decode + augment and its batches' collate), per-batch and
// per-sample times, and its share of the slowest sample class; judged by measure/worker_balance.
// summary.json's `workers_balance` (docs/metrics.md).
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/worker_balance.hpp"
#include "mmprof/loader.hpp"

namespace mmprof {

class WorkerLoads {
 public:
  void add_batch(const Batch& batch);

  // A sample's key from its index (Dataset::samples()), to name the slowest items.
  using KeyOf = std::function<std::string(uint32_t index)>;
  // The balance over a window of `window_s` seconds, judged in `context` (its slowest_class names
  // the class whose share each worker gets).
  WorkerBalance balance(double window_s, const BalanceContext& context, const KeyOf& key_of) const;
  // balance().to_json() and, per worker, stage_ms and collate_ms (busy_ms = their sum): the
  // figures stages.csv recomputes. Null when no batch was added.
  nlohmann::json to_json(double window_s, const BalanceContext& context, const KeyOf& key_of) const;

 private:
  struct Load {
    int64_t batches = 0, samples = 0;
    uint64_t bytes = 0;
    double stage_ms = 0, collate_ms = 0;
    std::vector<double> fetch_ms, item_ms;
    std::vector<std::pair<double, uint32_t>> items;  // (read + decode + augment, sample index)
    std::map<std::string, int64_t> classes;          // samples per sample_class()
  };
  std::map<int, Load> by_worker_;
};

}  // namespace mmprof
