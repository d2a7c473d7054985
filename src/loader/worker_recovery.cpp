#include "loader/worker_recovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "probe/clock.hpp"
#include "util/interrupt.hpp"

namespace mmprof {
namespace {

// Deaths of the worker holding one sample after which the sample is quarantined: once may be
// bad luck (the OOM killer, an operator's kill), twice is the sample.
constexpr int kCrashesToQuarantine = 2;

void set_record_message(SampleRecord& rec, const std::string& message) noexcept {
  const size_t n = std::min(message.size(), sizeof(rec.message) - 1);
  std::memcpy(rec.message, message.data(), n);
  rec.message[n] = '\0';
}

}  // namespace

WorkerRecovery::WorkerRecovery(const LoaderConfig& config, const Dataset& dataset,
                               const SlotRing& ring, int workers, uint32_t slots_per_worker)
    : config_(config),
      dataset_(dataset),
      ring_(ring),
      slots_per_worker_(slots_per_worker),
      busy_since_(static_cast<size_t>(std::max(workers, 1)), 0),
      outstanding_(static_cast<size_t>(std::max(workers, 1)), 0) {}

void WorkerRecovery::dispatched(int worker, int64_t now_ns) {
  if (outstanding_[worker]++ == 0) busy_since_[worker] = now_ns;
}

void WorkerRecovery::completed(int worker, int64_t now_ns) {
  busy_since_[worker] = --outstanding_[worker] > 0 ? now_ns : 0;
}

std::vector<int> WorkerRecovery::hung(int64_t now_ns) const {
  std::vector<int> out;
  const auto limit = static_cast<int64_t>(config_.timeout_s * 1e9);
  for (size_t w = 0; w < busy_since_.size(); ++w) {
    if (outstanding_[w] > 0 && now_ns - busy_since_[w] > limit) out.push_back(static_cast<int>(w));
  }
  return out;
}

void WorkerRecovery::prepare(const SlotView& slot) const {
  SlotHeader& h = slot.header();
  set_held_record(h, -1);
  for (uint32_t i = 0; i < h.planned; ++i) {
    SampleRecord& rec = slot.records()[i];
    const auto q = quarantined_.find(rec.index);
    rec.status = q == quarantined_.end() ? SampleStatus::ok : SampleStatus::quarantined;
    if (q != quarantined_.end()) set_record_message(rec, q->second);
  }
}

std::string WorkerRecovery::describe(const WorkerExit& exit, bool hung,
                                     const std::vector<std::pair<uint64_t, uint32_t>>& held,
                                     int32_t& record, uint32_t& record_slot) const {
  std::string what = exit.pid > 0 ? fmt::format("loader worker {} (pid {})", exit.worker, exit.pid)
                                  : fmt::format("loader worker thread {}", exit.worker);
  what += hung ? fmt::format(" held a batch for more than loader.timeout_s={} s and was killed",
                             config_.timeout_s)
               : " " + exit.how;
  record = -1;
  for (const auto& [id, slot] : held) {
    SlotHeader& h = ring_.slot(slot).header();
    if (const int32_t r = held_record(h); r >= 0 && static_cast<uint32_t>(r) < h.planned) {
      record = r;
      record_slot = slot;
      const uint32_t index = ring_.slot(slot).records()[r].index;
      return what + fmt::format(" while processing sample {} (batch {}, epoch {})",
                                dataset_.samples()[index].key, id, h.epoch);
    }
  }
  if (held.empty()) return what + " while idle";
  return what + fmt::format(" between samples, holding batch {}", held.front().first);
}

void WorkerRecovery::fail(const std::string& fault, bool hung, LoaderStats& stats) {
  // Counted like the faults before it, so summary.json lists every fault stderr reported.
  stats.hung_workers += hung ? 1 : 0;
  stats.worker_faults.push_back(fault);
  throw RunError(fault);
}

void WorkerRecovery::recover(const WorkerExit& exit, bool hung,
                             const std::map<uint64_t, uint32_t>& in_flight, WorkerPool& pool,
                             LoaderStats& stats) {
  throw_if_interrupted();  // a worker taken down by the same Ctrl-C is not a fault
  std::vector<std::pair<uint64_t, uint32_t>> held;  // ascending batch ids: dispatch order
  for (const auto& [id, slot] : in_flight) {
    if (static_cast<int>(slot / slots_per_worker_) == exit.worker) held.emplace_back(id, slot);
  }
  int32_t record = -1;
  uint32_t record_slot = 0;
  const std::string what = describe(exit, hung, held, record, record_slot);
  if (config_.on_worker_failure == WorkerFailure::fail) {
    fail(what + " (loader.on_worker_failure=fail)", hung, stats);
  }
  if (stats.respawns >= config_.max_respawns) {
    fail(fmt::format("{}; {} workers were replaced already (loader.max_respawns={})", what,
                     stats.respawns, config_.max_respawns),
         hung, stats);
  }
  std::string action = "respawned";
  if (record >= 0) {
    SampleRecord& rec = ring_.slot(record_slot).records()[record];
    if (++crashes_[rec.index] >= kCrashesToQuarantine) {
      quarantined_[rec.index] =
          fmt::format("took down its worker {} times, last: {}", crashes_[rec.index], what);
      action += fmt::format(", sample {} quarantined", dataset_.samples()[rec.index].key);
    }
  }
  pool.restart(exit.worker);
  stats.respawns++;
  stats.worker_restarts++;
  stats.hung_workers += hung ? 1 : 0;
  stats.worker_pids = pool.pids();
  outstanding_[exit.worker] = 0;
  busy_since_[exit.worker] = 0;
  for (const auto& [id, slot] : held) {
    prepare(ring_.slot(slot));
    pool.dispatch(exit.worker, slot);  // a failure shows as this worker's exit on the next wait
    dispatched(exit.worker, monotonic_ns());
    stats.retries++;
  }
  const std::string fault =
      fmt::format("{}; {} ({} of loader.max_respawns={}), {} batches retried", what, action,
                  stats.respawns, config_.max_respawns, held.size());
  std::fprintf(stderr, "mmprof: warning: %s\n", fault.c_str());
  stats.worker_faults.push_back(fault);
}

}  // namespace mmprof
