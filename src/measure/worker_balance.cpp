#include "measure/worker_balance.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

double batch_size(const WorkerStats& w) {
  return w.batches > 0 ? static_cast<double>(w.samples) / static_cast<double>(w.batches) : 0;
}

// The median over `ws` except `skip` of what `figure` gives (NaN when none has it).
template <class Figure>
double others_median(const std::vector<const WorkerStats*>& ws, const WorkerStats* skip,
                     Figure figure) {
  std::vector<double> values;
  for (const WorkerStats* w : ws) {
    if (w == skip) continue;
    if (const std::optional<double> v = figure(*w)) values.push_back(*v);
  }
  return median(values);
}

// With in-order delivery the consumer takes the slow worker's batch before the others' later
// ones, so they wait for it.
std::string delivery_remark(Delivery d) {
  switch (d) {
    case Delivery::in_order:
      return "; with in-order delivery (in_order=true) the others wait for it";
    case Delivery::in_order_fixed:
      return "; batches are delivered in order (this torch has no in_order), so the others wait "
             "for it";
    case Delivery::out_of_order:
      break;
  }
  return "";
}

// Batches are dealt to the workers in turn (round robin, as PyTorch's DataLoader): when their
// sizes follow the epoch (a short last batch) and the epoch's batch count is a multiple of the
// workers, the same worker gets every full batch.
bool batch_size_cause(WorkerBalance& out, const std::vector<const WorkerStats*>& ws,
                      const WorkerStats& slow, const BalanceContext& c) {
  const double typical =
      others_median(ws, &slow, [](const WorkerStats& w) -> std::optional<double> {
        return w.batches > 0 ? std::optional(batch_size(w)) : std::nullopt;
      });
  if (std::isnan(typical) || typical <= 0 || batch_size(slow) < kSlowerFactor * typical)
    return false;
  out.cause_kind = "batch_sizes";
  out.likely_cause = fmt::format(
      "worker {}'s batches hold {:.1f} samples on average against {:.1f} for the others: batches "
      "go to the workers in turn (round robin)",
      slow.worker, batch_size(slow), typical);
  const auto n = static_cast<int64_t>(ws.size());
  if (c.batches_per_epoch && *c.batches_per_epoch % n == 0) {
    out.likely_cause += fmt::format(
        ", and an epoch's {} batches are a multiple of the {} workers, so its short last batch "
        "always falls to the same worker",
        *c.batches_per_epoch, n);
  }
  out.likely_cause += delivery_remark(c.delivery);
  return true;
}

// One worker's fetches are slower per batch of the same size: a slow sample class that lands on
// it, or the worker itself slowed.
void slow_fetch_cause(WorkerBalance& out, const std::vector<const WorkerStats*>& ws,
                      const WorkerStats& slow, double typical_fetch, const BalanceContext& c) {
  std::string cause =
      fmt::format("worker {}'s fetches take {:.1f} ms against {:.1f} ms for the others",
                  slow.worker, *slow.fetch_mean_ms, typical_fetch);
  const double typical_p50 =
      others_median(ws, &slow, [](const WorkerStats& w) { return w.getitem_p50_ms; });
  const double typical_share =
      others_median(ws, &slow, [](const WorkerStats& w) { return w.slowest_class_share; });
  if (slow.slowest_class_share && !std::isnan(typical_share) &&
      *slow.slowest_class_share >= typical_share + kClassShareExcess) {
    out.cause_kind = "slow_sample_class";
    cause += fmt::format(
        ", and {:.0f} % of its samples are {} (the slowest class) against {:.0f} % of the "
        "others': one slow sample class lands on it",
        100 * *slow.slowest_class_share, c.slowest_class, 100 * typical_share);
  } else if (slow.getitem_p50_ms && !std::isnan(typical_p50) &&
             *slow.getitem_p50_ms <= 1.2 * typical_p50) {
    out.cause_kind = "slow_sample_class";
    std::vector<std::string> named;
    for (const auto& [index, t] : slow.slowest_items)
      named.push_back(fmt::format("{} ({:.1f} ms)", index, t));
    cause += fmt::format(
        ", while its typical item is as fast ({:.1f} ms against {:.1f} ms): a few slow samples "
        "(a slow sample class) land on it; slowest: {}",
        *slow.getitem_p50_ms, typical_p50, fmt::join(named, ", "));
  } else if (slow.getitem_p50_ms && !std::isnan(typical_p50)) {
    out.cause_kind = "slow_worker";
    cause += fmt::format(
        ", and every item is slower there (median {:.1f} ms against {:.1f} ms): the worker "
        "itself is slowed (CPU contention or affinity, its storage path)",
        *slow.getitem_p50_ms, typical_p50);
  } else {
    out.cause_kind = "slow_fetches";
  }
  out.likely_cause = cause + delivery_remark(c.delivery);
}

void name_cause(WorkerBalance& out, const std::vector<const WorkerStats*>& ws,
                const WorkerStats* most_batches, const BalanceContext& c) {
  const WorkerStats* slow = nullptr;
  for (const WorkerStats* w : ws)
    if (w->fetch_mean_ms && (slow == nullptr || *w->fetch_mean_ms > *slow->fetch_mean_ms)) slow = w;
  const double typical_fetch =
      others_median(ws, slow, [](const WorkerStats& w) { return w.fetch_mean_ms; });
  if (slow != nullptr && !std::isnan(typical_fetch) &&
      *slow->fetch_mean_ms > kSlowerFactor * typical_fetch) {
    if (!batch_size_cause(out, ws, *slow, c)) slow_fetch_cause(out, ws, *slow, typical_fetch, c);
  } else if (most_batches != nullptr) {
    const bool out_of_order = c.delivery == Delivery::out_of_order;
    out.cause_kind = out_of_order ? "out_of_order" : "uneven_work";
    out.likely_cause =
        out_of_order
            ? fmt::format("in_order=false: the faster workers take more batches (worker {})",
                          most_batches->worker)
            : fmt::format(
                  "uneven work per worker (worker {} fetched most): an IterableDataset's "
                  "shards or a custom sampler",
                  most_batches->worker);
  }
}

// The configured workers that have no record: added with nothing done (busy 0 in a measured
// window), their ids returned. `idle`: the window held enough batches for every worker to take
// two turns (with fewer, a worker may just not have had its turn yet).
std::vector<int> add_absent_workers(WorkerBalance& out, const BalanceContext& context, bool& idle) {
  idle = false;
  if (!context.workers) return {};
  int64_t batches = 0;
  for (const WorkerStats& w : out.workers)
    batches += w.batches;
  const bool measured = !out.workers.empty() && out.workers.front().busy_fraction.has_value();
  std::vector<int> absent;
  for (int id = 0; id < *context.workers; ++id) {
    if (std::any_of(out.workers.begin(), out.workers.end(),
                    [&](const WorkerStats& w) { return w.worker == id; }))
      continue;
    WorkerStats w;
    w.worker = id;
    if (measured) w.busy_fraction = 0.0;
    out.workers.push_back(std::move(w));
    absent.push_back(id);
  }
  std::sort(out.workers.begin(), out.workers.end(),
            [](const WorkerStats& a, const WorkerStats& b) { return a.worker < b.worker; });
  idle = !absent.empty() && batches >= 2 * static_cast<int64_t>(*context.workers);
  return absent;
}

}  // namespace

void judge_balance(WorkerBalance& out, const BalanceContext& context) {
  out.busy_spread_limit = kBusySpreadLimit;
  bool idle = false;
  const std::vector<int> absent = add_absent_workers(out, context, idle);
  if (idle) {
    out.imbalanced = true;
    out.flags.push_back(fmt::format("worker{} {} delivered nothing in the window: idle",
                                    absent.size() == 1 ? "" : "s", fmt::join(absent, ", ")));
    out.cause_kind = "idle_workers";
    out.likely_cause = fmt::format(
        "{} of the {} workers got no work: an IterableDataset with fewer shards (or items) than "
        "workers, or a sampler that leaves some none; the idle ones still cost their memory",
        absent.size(), *context.workers);
  }
  // The other rules compare the workers that worked.
  std::vector<const WorkerStats*> ws;
  for (const WorkerStats& w : out.workers) {
    if (w.worker >= 0 && std::find(absent.begin(), absent.end(), w.worker) == absent.end())
      ws.push_back(&w);
  }
  const bool measured = std::all_of(
      ws.begin(), ws.end(), [](const WorkerStats* w) { return w->busy_fraction.has_value(); });
  if (ws.size() < 2 || !measured) return;
  const auto [lo, hi] = std::minmax_element(ws.begin(), ws.end(), [](const auto* a, const auto* b) {
    return *a->busy_fraction < *b->busy_fraction;
  });
  out.busy_spread = *(*hi)->busy_fraction - *(*lo)->busy_fraction;
  const double typical_busy =
      others_median(ws, nullptr, [](const WorkerStats& w) { return w.busy_fraction; });
  if (typical_busy > 0) out.busy_max_over_median = *(*hi)->busy_fraction / typical_busy;
  if (*out.busy_spread > kBusySpreadLimit) {
    out.flags.push_back(
        fmt::format("busy fractions differ by {:.2f} (> {}): worker {} {:.2f}, worker {} {:.2f}",
                    *out.busy_spread, kBusySpreadLimit, (*hi)->worker, *(*hi)->busy_fraction,
                    (*lo)->worker, *(*lo)->busy_fraction));
  }
  const double median_batches = others_median(ws, nullptr, [](const WorkerStats& w) {
    return std::optional(static_cast<double>(w.batches));
  });
  const WorkerStats* most_batches = nullptr;
  for (const WorkerStats* w : ws) {
    if (static_cast<double>(w->batches) > kBatchCountLimit * median_batches) {
      out.flags.push_back(fmt::format("worker {} fetched {} batches, > {} x the median {:g}",
                                      w->worker, w->batches, kBatchCountLimit, median_batches));
      if (most_batches == nullptr || w->batches > most_batches->batches) most_batches = w;
    }
  }
  out.imbalanced = !out.flags.empty();
  if (out.imbalanced && !idle) name_cause(out, ws, most_batches, context);
}

}  // namespace mmprof
