#pragma once
// How evenly a data loader's workers share the work, and the likely cause when they do not. One
// judgement for both loaders mmprof measures: its own (the pipeline phase's batches, run/
// worker_loads) and a user's DataLoader (the hook's fetch and __getitem__ records,
// external/job_timeline). The producers fill WorkerStats; judge_balance() applies the rules and
// names the cause. Pure.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmprof {

// The rules. Imbalanced when the busiest and idlest workers' busy fractions differ by more than
// kBusySpreadLimit, or a worker fetched more than kBatchCountLimit x the median worker's batches.
inline constexpr double kBusySpreadLimit = 0.2;
inline constexpr double kBatchCountLimit = 1.5;
// A worker's batches are "larger" or "slower" than the others' beyond this factor of the median
// of the others.
inline constexpr double kSlowerFactor = 1.25;
// A worker's share of the slowest sample class above the others' median share by this much (20
// percentage points) makes that class the cause.
inline constexpr double kClassShareExcess = 0.2;

// A measured window on the monotonic clock (ns): busy time is what falls inside it, since a
// batch delivered early in the window was partly prepared before it opened. Not known: every
// interval counts whole.
struct TimeWindow {
  bool known = false;
  int64_t start = 0, end = 0;
  bool contains(int64_t t) const { return !known || (t >= start && t < end); }
  int64_t overlap(int64_t a, int64_t b) const {
    if (!known) return b - a;
    return std::max<int64_t>(0, std::min(b, end) - std::max(a, start));
  }
  double ms() const { return known ? static_cast<double>(end - start) / 1e6 : 0; }
};

struct WorkerStats {
  int worker = -1;                   // -1: loading in the main process (num_workers=0)
  std::vector<int> pids;             // a job: one per iterator without persistent workers
  int64_t batches = 0, samples = 0;  // batches that started (a job) or were delivered in the window
  std::optional<uint64_t> bytes;     // media + caption bytes read (mmprof's loader; a job: null)
  double busy_ms = 0;                // the worker's time on its batches that fell inside the window
  std::optional<double> busy_fraction;  // busy_ms / the window (at most 1: one process)
  // fetch: one batch in the worker (a job's fetch; mmprof: its samples' read + decode + augment
  // and its collate). getitem: one sample (a job's __getitem__; mmprof: read + decode + augment).
  std::optional<double> fetch_mean_ms, getitem_p50_ms, getitem_p90_ms;
  std::vector<std::pair<std::string, double>> slowest_items;  // (index or key, ms), at most 3
  // mmprof's loader: the share of its samples in the run's slowest sample class.
  std::optional<double> slowest_class_share;
  nlohmann::json to_json() const;
};

// How batches reach the consumer: in order (loader.in_order / DataLoader in_order=True), out of
// order, or in order because this torch has no in_order argument.
enum class Delivery { in_order, out_of_order, in_order_fixed };

struct BalanceContext {
  Delivery delivery = Delivery::in_order;
  std::optional<int64_t> batches_per_epoch;
  std::string slowest_class;  // the class slowest_class_share counts ("webp images >8 MP")
  // The loader's configured workers: one that delivered nothing in the window is listed idle.
  std::optional<int> workers;
};

struct WorkerBalance {
  std::vector<WorkerStats> workers;   // by worker id
  std::optional<double> busy_spread;  // max - min busy fraction
  std::optional<double> busy_max_over_median;
  bool imbalanced = false;
  std::vector<std::string> flags;  // which rule fired
  std::string likely_cause;        // empty when none is visible in the records
  // idle_workers | batch_sizes | slow_sample_class | slow_worker | slow_fetches | out_of_order |
  // uneven_work
  std::string cause_kind;
  nlohmann::json to_json() const;
};

// Applies the rules to balance.workers: the figures need at least two worker processes (id >= 0)
// with busy fractions (a measured window); without them balance is left as it is. A configured
// worker with no record (context.workers) is added with nothing done, and when the window held
// batches enough for each worker to take two turns, it is flagged idle: the first cause.
void judge_balance(WorkerBalance& balance, const BalanceContext& context);

}  // namespace mmprof
