#include "run/worker_loads.hpp"

#include <algorithm>
#include <cmath>

#include "run/stage_breakdown.hpp"
#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

std::optional<double> finite(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

}  // namespace

void WorkerLoads::add_batch(const Batch& batch) {
  Load& w = by_worker_[batch.worker];
  double fetch = batch.collate_ms;
  for (const SampleInfo& s : batch.samples) {
    // A sample the main process decoded cost its worker the read only.
    const double item = s.read_ms + (s.decoded_in_main ? 0 : s.decode_ms + s.augment_ms);
    w.stage_ms += item;
    w.item_ms.push_back(item);
    w.items.emplace_back(item, s.index);
    w.bytes += s.bytes;
    w.classes[sample_class(s)]++;
    fetch += item;
  }
  w.batches++;
  w.samples += static_cast<int64_t>(batch.samples.size());
  w.collate_ms += batch.collate_ms;
  w.fetch_ms.push_back(fetch);
}

WorkerBalance WorkerLoads::balance(double window_s, const BalanceContext& context,
                                   const KeyOf& key_of) const {
  WorkerBalance out;
  for (const auto& [id, load] : by_worker_) {
    WorkerStats w;
    w.worker = id;
    w.batches = load.batches;
    w.samples = load.samples;
    w.bytes = load.bytes;
    w.busy_ms = load.stage_ms + load.collate_ms;
    if (window_s > 0) w.busy_fraction = w.busy_ms / (1e3 * window_s);
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

nlohmann::json WorkerLoads::to_json(double window_s, const BalanceContext& context,
                                    const KeyOf& key_of) const {
  if (by_worker_.empty()) return nullptr;
  nlohmann::json j = balance(window_s, context, key_of).to_json();
  for (auto& w : j["workers"]) {
    // A configured worker that delivered nothing (judge_balance lists it) has no load: it spent
    // nothing on stages or collation.
    const auto load = by_worker_.find(w["worker"].get<int>());
    const bool worked = load != by_worker_.end();
    w["stage_ms"] = worked ? load->second.stage_ms : 0.0;
    w["collate_ms"] = worked ? load->second.collate_ms : 0.0;
  }
  return j;
}

}  // namespace mmprof
