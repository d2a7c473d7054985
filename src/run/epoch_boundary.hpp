#pragma once
// The epoch-boundary stall: how long the consumer waits for the first batch of a new epoch,
// against its usual wait. Without persistent workers the loader starts a fresh pool at every
// epoch (PyTorch re-creates its iterator), and that start-up is paid by this batch; with them
// the workers run into the next epoch's plan as if nothing happened.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmprof {

class EpochBoundaryTally {
 public:
  // One measured batch of `phase`: `batch_id` in a loader that started at `first_batch_id`
  // (whose own first batch is start-up, not a boundary), waited for `wait_ms`.
  void observe(const std::string& phase, uint64_t batch_id, uint64_t first_batch_id,
               size_t batches_per_epoch, double wait_ms);

  // summary.json "epoch_boundary": per loader phase `boundaries` (epoch-first batches measured),
  // `stall_ms` (their mean wait), `steady_wait_ms` (median wait of the other batches) and
  // `excess_ms` (the difference); top-level `stall_ms` is the pipeline phase's (the loader
  // alone). Figures are null when a phase crossed no boundary.
  nlohmann::json to_json(bool persistent_workers, size_t batches_per_epoch) const;

 private:
  struct Waits {
    std::vector<double> boundary, steady;
  };
  std::map<std::string, Waits> phases_;
};

}  // namespace mmprof
