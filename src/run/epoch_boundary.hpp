#pragma once
// The epoch-boundary stall: how long the consumer waits for the first batch of a new epoch, and
// how much of that wait the batch's own filling does not explain. Without persistent workers the
// loader starts a fresh pool at every epoch (PyTorch re-creates its iterator), and that start-up
// is paid by this batch; with them the workers run into the next epoch's plan as if nothing
// happened.
//
// Why not the wait alone against the other batches: with loader.drop_last false an epoch ends
// with a short batch, quick to fill, and in-order delivery moves the time it saved onto the next
// (full) batch, the epoch's first. Against the median of all other batches, or even of the other
// full ones, that alternation looks like a stall. A worker fills one batch at a time and starts a
// batch no later than the consumer asks for it, so in steady state a batch never waits longer
// than its own fill time (its samples' read + decode + augment, and collate); what it waits beyond
// that is start-up or a pipeline that ran empty.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/loader.hpp"
#include "mmprof/summary_loading.hpp"

namespace mmprof {

class EpochBoundaryTally {
 public:
  // Below this an unexplained wait is not a stall whatever the noise (the hand-over of a batch).
  static constexpr double kFloorMs = 1.0;

  // Every batch a loader phase consumed, warm-up included (`measured` false: it only sets the
  // epoch the next batch is compared with). A batch whose epoch id differs from the previous
  // batch's starts an epoch. The loader's own first batch (`first_batch_id`) is start-up: neither
  // a boundary nor a steady batch.
  void observe(const std::string& phase, const Batch& batch, uint64_t first_batch_id,
               bool measured);

  // summary.json "epoch_boundary": per loader phase `boundaries` (epoch-first batches measured),
  // `batch_size` (the first one's delivered size), `stall_ms` (their mean wait),
  // `steady_wait_ms` (median wait of the other batches of that size), `excess_ms` (the
  // difference), `fill_ms` (their mean fill time), `unexplained_ms` (mean of wait - fill),
  // `noise_ms` (p90 of wait - fill over the other batches of that size, at least 0),
  // `threshold_ms` (max(kFloorMs, noise)), `stall` (unexplained above the threshold; null
  // without a boundary) and `verdict`. The run's verdict is the pipeline phase's (the loader
  // alone).
  EpochBoundaryFigures figures(bool persistent_workers, size_t batches_per_epoch) const;

  // One delivered batch: its size, the consumer's wait, the workers' time to fill it.
  struct Timed {
    int64_t size = 0;
    double wait_ms = 0, fill_ms = 0;
  };

 private:
  struct Waits {
    std::vector<Timed> boundary;
    std::map<int64_t, std::vector<Timed>> steady;  // by delivered size
    std::optional<int64_t> last_epoch;
  };
  std::map<std::string, Waits> phases_;
};

}  // namespace mmprof
