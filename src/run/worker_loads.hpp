#pragma once
// The load of each of mmprof's loader workers over a phase's measured batches: samples, bytes,
// busy time (its samples' read + decode + augment and its batches' collate), per-batch and
// per-sample times, and its share of the slowest sample class; judged by measure/worker_balance.
// summary.json's `workers_balance` (docs/metrics.md).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
  // The balance over `window` (the phase's measured steps), judged in `context` (its
  // slowest_class names the class whose share each worker gets). Busy time counts the part of
  // each sample's work and each collate that fell inside the window.
  WorkerBalance balance(const TimeWindow& window, const BalanceContext& context,
                        const KeyOf& key_of) const;
  // balance() with, per worker, stage_ms and collate_ms inside the window (busy_ms = their sum);
  // empty when no batch was added.
  std::optional<WorkerBalance> figures(const TimeWindow& window, const BalanceContext& context,
                                       const KeyOf& key_of) const;

 private:
  struct Load {
    int64_t batches = 0, samples = 0;
    uint64_t bytes = 0;
    std::vector<double> fetch_ms, item_ms;
    std::vector<std::pair<double, uint32_t>> items;  // (read + decode + augment, sample index)
    // When each item's work and each batch's collate (after its last item) ran: (start ns, ms).
    std::vector<std::pair<int64_t, double>> item_spans, collate_spans;
    std::map<std::string, int64_t> classes;  // samples per sample_class()
  };
  std::map<int, Load> by_worker_;
  static double in_window(const std::vector<std::pair<int64_t, double>>& spans,
                          const TimeWindow& window);
};

}  // namespace mmprof
