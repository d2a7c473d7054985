#include "run/worker_loads.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "run/stage_breakdown.hpp"
#include "stats/descriptive.hpp"

namespace mmprof {

void WorkerLoads::add_batch(const Batch& batch) {
  Load& w = by_worker_[batch.worker];
  double fetch = batch.collate_ms;
  // A batch of failed samples only: its collate placed at its delivery.
  int64_t last_end_ns = batch.samples.empty() ? batch.ready_ns : INT64_MIN;
  for (const SampleInfo& s : batch.samples) {
    // A sample the main process decoded cost its worker the read only.
    const double item = s.read_ms + (s.decoded_in_main ? 0 : s.decode_ms + s.augment_ms);
    w.item_spans.emplace_back(s.t_start_ns, item);
    last_end_ns =
        std::max(last_end_ns, s.t_start_ns + static_cast<int64_t>(std::llround(item * 1e6)));
    w.item_ms.push_back(item);
    w.items.emplace_back(item, s.index);
    w.bytes += s.bytes;
    w.classes[sample_class(s)]++;
    fetch += item;
  }
  w.batches++;
  w.samples += static_cast<int64_t>(batch.samples.size());
  w.collate_spans.emplace_back(last_end_ns, batch.collate_ms);
  w.fetch_ms.push_back(fetch);
}

double WorkerLoads::in_window(const std::vector<std::pair<int64_t, double>>& spans,
                              const TimeWindow& window) {
  double sum = 0;
  for (const auto& [start, ms] : spans) {
    const auto end = start + static_cast<int64_t>(std::llround(ms * 1e6));
    sum += ms <= 0 ? 0
                   : ms * static_cast<double>(window.overlap(start, end)) /
                         static_cast<double>(std::max<int64_t>(1, end - start));
  }
  return sum;
}

WorkerBalance WorkerLoads::balance(const TimeWindow& window, const BalanceContext& context,
                                   const KeyOf& key_of) const {
  WorkerBalance out;
  for (const auto& [id, load] : by_worker_) {
    WorkerStats w;
    w.worker = id;
    w.batches = load.batches;
    w.samples = load.samples;
    w.bytes = load.bytes;
    w.busy_ms = in_window(load.item_spans, window) + in_window(load.collate_spans, window);
    if (window.ms() > 0) w.busy_fraction = w.busy_ms / window.ms();
    w.fetch_mean_ms = finite(mean(load.fetch_ms));
    std::vector<double> items = load.item_ms;
    std::sort(items.begin(), items.end());
    w.getitem_p50_ms = finite(quantile_sorted(items, 0.5));
    w.getitem_p90_ms = finite(quantile_sorted(items, 0.9));
    auto slowest = load.items;
    std::stable_sort(slowest.begin(), slowest.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; k < std::min<size_t>(3, slowest.size()); ++k)
      w.slowest_items.emplace_back(key_of(slowest[k].second), slowest[k].first);
    if (!context.slowest_class.empty() && load.samples > 0) {
      const auto c = load.classes.find(context.slowest_class);
      w.slowest_class_share = static_cast<double>(c == load.classes.end() ? 0 : c->second) /
                              static_cast<double>(load.samples);
    }
    out.workers.push_back(std::move(w));
  }
  judge_balance(out, context);
  return out;
}

std::optional<WorkerBalance> WorkerLoads::figures(const TimeWindow& window,
                                                  const BalanceContext& context,
                                                  const KeyOf& key_of) const {
  if (by_worker_.empty()) return std::nullopt;
  WorkerBalance b = balance(window, context, key_of);
  for (WorkerStats& w : b.workers) {
    // A configured worker that delivered nothing (judge_balance lists it) has no load: it spent
    // nothing on stages or collation.
    const auto load = by_worker_.find(w.worker);
    const bool worked = load != by_worker_.end();
    w.stage_ms = worked ? in_window(load->second.item_spans, window) : 0.0;
    w.collate_ms = worked ? in_window(load->second.collate_spans, window) : 0.0;
  }
  return b;
}

}  // namespace mmprof
