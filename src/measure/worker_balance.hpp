#pragma once
// How evenly a data loader's workers share the work, and the likely cause when they do not. One
// judgement for both loaders mmprof measures: its own (the pipeline phase's batches, run/
// worker_loads) and a user's DataLoader (the hook's fetch and __getitem__ records,
// external/job_timeline). The producers fill WorkerStats; judge_balance() applies the rules and
// names the cause (mmprof/summary_loading.hpp holds the figures). Pure.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/summary_loading.hpp"

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

// Applies the rules to balance.workers: the figures need at least two worker processes (id >= 0)
// with busy fractions (a measured window); without them balance is left as it is. A configured
// worker with no record (context.workers) is added with nothing done, and when the window held
// batches enough for each worker to take two turns, it is flagged idle: the first cause.
void judge_balance(WorkerBalance& balance, const BalanceContext& context);

}  // namespace mmprof
