#pragma once
// What the loader does when a worker stops (killed, crashed) or holds a batch past
// loader.timeout_s: name the worker, its pid and the sample it held; then, under
// loader.on_worker_failure=respawn and within loader.max_respawns, start a fresh worker and
// dispatch the batches it held again. A sample that was being processed when its worker died
// twice is quarantined: it fails (stage "worker") instead of taking down a third worker, in this
// and every later epoch. Under fail, or once the budget is spent, it throws RunError.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loader/batch_slot.hpp"
#include "loader/worker_pool.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/loader.hpp"

namespace mmprof {

class WorkerRecovery {
 public:
  WorkerRecovery(const LoaderConfig& config, const Dataset& dataset, const SlotRing& ring,
                 int workers, uint32_t slots_per_worker);

  // Timeout bookkeeping: a worker's clock runs from its last completion, or from the dispatch
  // that gave an idle worker work.
  void dispatched(int worker, int64_t now_ns);
  void completed(int worker, int64_t now_ns);
  // Workers that have held work for longer than loader.timeout_s at now_ns.
  std::vector<int> hung(int64_t now_ns) const;

  // Resets a slot's records for a fresh dispatch, marking samples quarantined earlier.
  void prepare(const SlotView& slot) const;

  // Handles a stopped worker (see the header comment). `in_flight` maps batch id -> slot.
  void recover(const WorkerExit& exit, bool hung, const std::map<uint64_t, uint32_t>& in_flight,
               WorkerPool& pool, LoaderStats& stats);

 private:
  std::string describe(const WorkerExit& exit, bool hung,
                       const std::vector<std::pair<uint64_t, uint32_t>>& held, int32_t& record,
                       uint32_t& record_slot) const;
  // A fault that ends the run: counted in `stats`, then thrown as a RunError.
  [[noreturn]] static void fail(const std::string& fault, bool hung, LoaderStats& stats);

  const LoaderConfig& config_;
  const Dataset& dataset_;
  const SlotRing& ring_;
  uint32_t slots_per_worker_;
  std::vector<int64_t> busy_since_;  // per worker; 0 = idle
  std::vector<int> outstanding_;     // batches dispatched and not completed, per worker
  std::map<uint32_t, int> crashes_;  // sample index -> deaths of the worker processing it
  std::map<uint32_t, std::string> quarantined_;  // sample index -> why
};

}  // namespace mmprof
