#include "external/job_timeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "run/job_summary.hpp"
#include "stats/inference.hpp"

namespace mmprof::external {
namespace {

using nlohmann::json;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json dist(const Distribution& d) {
  return mmprof::to_json(d, false);
}

double ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// The part the hook names for a torchvision dataset's loader; every other part is a transform.
constexpr std::string_view kDecodePart = "decode";

// One item's decode (its dataset's loader) and augment (the sum of its transforms), in ms; each
// empty when the hook timed no such part.
struct ItemParts {
  std::optional<double> decode_ms, augment_ms;
};
ItemParts item_parts(const GetitemRecord& g) {
  ItemParts p;
  for (const auto& [name, ns] : g.parts) {
    if (name == kDecodePart) {
      p.decode_ms = ms(ns);
    } else {
      p.augment_ms = p.augment_ms.value_or(0) + ms(ns);
    }
  }
  return p;
}

std::optional<double> finite(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

// An integer --loader: optional sign and digits, as Python's int() reads MMPROF_HOOK_LOADER.
std::optional<int64_t> integer_select(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 9) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return std::nullopt;
  return std::stoll(s);
}

// The records of one main process's followed loader, and of the processes loading for it.
struct Scope {
  const HookRecords& records;
  const MainProcess& process;
  int loader;

  bool main(const RecordSource& s, int l) const {
    return s.section == process.section && l == loader;
  }
  // A fetch or getitem of this loader: in the main process itself (num_workers=0), or in a
  // worker whose proc line names this main process.
  bool loading(const RecordSource& s, int l) const {
    if (l != loader) return false;
    if (s.section == process.section) return true;
    const ProcRecord* p = records.section(s.section);
    return p != nullptr && p->is_worker() && p->main_pid == process.pid;
  }
};

struct Window {
  bool known = false;
  int64_t start = 0, end = 0;
  bool contains(int64_t t) const { return !known || (t >= start && t < end); }
  int64_t overlap(int64_t a, int64_t b) const {
    if (!known) return b - a;
    return std::max<int64_t>(0, std::min(b, end) - std::max(a, start));
  }
};

WorkerBalance worker_balance(const Scope& scope, const Window& window, const LoaderRecord* loader,
                             std::optional<int64_t> batches_per_epoch) {
  WorkerBalance out;
  std::map<int, WorkerStats> by_worker;
  std::map<int, std::set<int>> pids;
  std::map<int, std::vector<double>> fetch_ms, getitem_ms;
  std::map<int, std::vector<std::pair<double, std::string>>> items;
  for (const FetchRecord& f : scope.records.fetches) {
    if (!scope.loading(f, f.loader)) continue;
    WorkerStats& w = by_worker[f.worker];
    w.worker = f.worker;
    pids[f.worker].insert(f.pid);
    w.busy_ms += ms(window.overlap(f.start_ns, f.end_ns));
    if (!window.contains(f.start_ns)) continue;
    w.batches++;
    w.samples += f.size.value_or(0);
    fetch_ms[f.worker].push_back(ms(f.end_ns - f.start_ns));
  }
  for (const GetitemRecord& g : scope.records.getitems) {
    if (!scope.loading(g, g.loader)) continue;
    by_worker[g.worker].worker = g.worker;
    pids[g.worker].insert(g.pid);
    if (!window.contains(g.start_ns)) continue;
    getitem_ms[g.worker].push_back(ms(g.dur_ns));
    items[g.worker].emplace_back(ms(g.dur_ns), g.index);
  }
  const double window_ms = window.known ? ms(window.end - window.start) : 0;
  for (auto& [id, w] : by_worker) {
    w.pids.assign(pids[id].begin(), pids[id].end());
    if (window_ms > 0) w.busy_fraction = w.busy_ms / window_ms;
    w.fetch_mean_ms = finite(mean(fetch_ms[id]));
    std::vector<double> g = getitem_ms[id];
    std::sort(g.begin(), g.end());
    w.getitem_p50_ms = finite(quantile_sorted(g, 0.5));
    w.getitem_p90_ms = finite(quantile_sorted(g, 0.9));
    auto& it = items[id];
    std::stable_sort(it.begin(), it.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; k < std::min<size_t>(3, it.size()); ++k)
      w.slowest_items.emplace_back(it[k].second, it[k].first);
    out.workers.push_back(w);
  }

  // in_order: null when this torch has no such parameter (its batches always come in order).
  BalanceContext context;
  context.batches_per_epoch = batches_per_epoch;
  if (loader != nullptr) context.workers = loader->config.num_workers;
  if (loader == nullptr || !loader->config.in_order.has_value()) {
    context.delivery = Delivery::in_order_fixed;
  } else {
    context.delivery = *loader->config.in_order ? Delivery::in_order : Delivery::out_of_order;
  }
  judge_balance(out, context);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<MainProcess> main_processes(const HookRecords& records) {
  std::map<int, int> last_worker_section;
  for (size_t i = 0; i < records.procs.size(); ++i) {
    if (records.procs[i].is_worker())
      last_worker_section[records.procs[i].pid] = static_cast<int>(i);
  }
  std::vector<MainProcess> out;
  for (size_t i = 0; i < records.procs.size(); ++i) {
    const ProcRecord& p = records.procs[i];
    if (p.is_worker()) continue;
    const auto w = last_worker_section.find(p.pid);
    if (w != last_worker_section.end() && w->second > static_cast<int>(i)) continue;
    out.push_back({p.pid, static_cast<int>(i), p.rank});
  }
  std::sort(out.begin(), out.end(), [](const MainProcess& a, const MainProcess& b) {
    if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
    if (a.rank && *a.rank != *b.rank) return *a.rank < *b.rank;
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.section < b.section;
  });
  return out;
}

json LoaderSummary::to_json() const {
  return {{"loader", loader},
          {"origin", origin},
          {"dataset", dataset},
          {"num_workers", opt(num_workers)},
          {"batch_size", opt(batch_size)},
          {"batches", batches},
          {"epochs", epochs},
          {"follow", follow}};
}

json LoaderChoice::to_json() const {
  json all = json::array();
  for (const LoaderSummary& l : loaders)
    all.push_back(l.to_json());
  return {{"pid", pid},
          {"rank", opt(rank)},
          {"loaders", all},
          {"chosen", opt(chosen)},
          {"reason", reason}};
}

LoaderChoice choose_loader(const HookRecords& records, const MainProcess& process,
                           const std::string& select) {
  LoaderChoice c;
  c.pid = process.pid;
  c.rank = process.rank;
  std::map<int, LoaderSummary> by_id;
  for (const LoaderRecord& l : records.loaders) {
    if (l.section != process.section) continue;
    LoaderSummary& s = by_id[l.loader];
    s.origin = l.origin;
    s.dataset = l.config.dataset;
    s.num_workers = l.config.num_workers;
    s.batch_size = l.config.batch_size;
    s.follow = l.follow;
  }
  for (const BatchRecord& b : records.batches)
    if (b.section == process.section) by_id[b.loader].batches++;
  for (const EpochRecord& e : records.epochs)
    if (e.section == process.section) by_id[e.loader].epochs++;
  for (auto& [id, s] : by_id) {
    s.loader = id;
    c.loaders.push_back(s);
  }
  if (c.loaders.empty()) {
    c.reason = "no DataLoader in this process";
    return c;
  }
  // The loader with the most batches among `pick` (ties: the first constructed).
  auto most = [&](auto&& pick) -> const LoaderSummary* {
    const LoaderSummary* best = nullptr;
    for (const LoaderSummary& s : c.loaders)
      if (pick(s) && (best == nullptr || s.batches > best->batches)) best = &s;
    return best;
  };
  if (select.empty()) {
    const LoaderSummary* best = most([](const LoaderSummary&) { return true; });
    if (best->batches == 0) {
      c.reason = "no loader returned a batch";
      return c;
    }
    c.chosen = best->loader;
    if (c.loaders.size() == 1) {
      c.reason = "the only loader";
    } else {
      const LoaderSummary* next =
          most([&](const LoaderSummary& s) { return s.loader != best->loader; });
      c.reason = fmt::format("most batches: {} (next: loader {} with {})", best->batches,
                             next->loader, next->batches);
      if (next->batches == best->batches) c.reason += "; a tie goes to the first constructed";
    }
    return c;
  }
  if (const auto index = integer_select(select)) {
    for (const LoaderSummary& s : c.loaders) {
      if (s.loader == *index) {
        c.chosen = s.loader;
        c.reason = fmt::format("--loader {}: construction order in the process", select);
        return c;
      }
    }
    c.reason = fmt::format("--loader {}: this process has no loader {} (its loaders: 0..{})",
                           select, *index, c.loaders.back().loader);
    return c;
  }
  int matches = 0;
  for (const LoaderSummary& s : c.loaders)
    matches += s.dataset == select ? 1 : 0;
  if (matches == 0) {
    std::vector<std::string> classes;
    for (const LoaderSummary& s : c.loaders)
      classes.push_back(fmt::format("{} {}", s.loader, s.dataset.empty() ? "?" : s.dataset));
    c.reason = fmt::format("--loader {}: no loader with a dataset of that class (loaders: {})",
                           select, fmt::join(classes, ", "));
    return c;
  }
  c.chosen = most([&](const LoaderSummary& s) { return s.dataset == select; })->loader;
  c.reason = matches == 1 ? fmt::format("--loader {}: dataset class", select)
                          : fmt::format(
                                "--loader {}: dataset class ({} loaders of that class: "
                                "the one with the most batches)",
                                select, matches);
  return c;
}

// ---------------------------------------------------------------------------------------------

json EpochGaps::to_json() const {
  const Distribution d = describe(gaps_ms);
  const Distribution it = describe(iterator_start_ms);
  double total = 0;
  for (const double g : gaps_ms)
    total += g;
  auto v = [](const Distribution& x, double y) { return x.count == 0 ? json(nullptr) : json(y); };
  return {{"count", d.count},
          {"mean_ms", v(d, d.mean)},
          {"max_ms", v(d, d.max)},
          {"total_ms", v(d, total)},
          {"iterator_start_ms",
           {{"count", it.count}, {"mean", v(it, it.mean)}, {"max", v(it, it.max)}}}};
}

json EpochBoundary::to_json() const {
  return {{"persistent_workers", opt(persistent_workers)},
          {"batches_per_epoch", opt(batches_per_epoch)},
          {"boundaries", boundaries},
          {"stall_ms", opt(stall_ms)},
          {"steady_wait_ms", opt(steady_wait_ms)},
          {"excess_ms", opt(excess_ms)},
          {"threshold_ms", threshold_ms},
          {"stall", stall},
          {"verdict", verdict}};
}

json StageTimes::to_json() const {
  json transforms = json::object();
  for (const auto& [name, d] : transform_ms)
    transforms[name] = dist(d);
  return {{"fetch", dist(fetch_ms)},
          {"collate", dist(collate_ms)},
          {"pin", dist(pin_ms)},
          {"getitem", dist(getitem_ms)},
          {"decode", dist(decode_ms)},
          {"augment", dist(augment_ms)},
          {"transforms", transforms},
          {"getitem_every", getitem_every},
          {"getitem_per_call", getitem_per_call}};
}

std::optional<double> RankTimeline::window_ms() const {
  if (!window_start_ns || !window_end_ns) return std::nullopt;
  return ms(*window_end_ns - *window_start_ns);
}

json RankTimeline::to_json() const {
  return {
      {"rank", opt(rank)},
      {"pid", pid},
      {"loader", opt(loader)},
      {"steps",
       {{"measured", steps.size()},
        {"warmup_batches", warmup_batches},
        {"capped_batches", capped_batches},
        {"dropped_unfinished", dropped_unfinished},
        {"dropped_epoch_left", dropped_epoch_left}}},
      {"window",
       {{"start_ns", opt(window_start_ns)},
        {"end_ns", opt(window_end_ns)},
        {"window_ms", opt(window_ms())},
        {"step_ms_total", step_ms_total},
        {"wait_ms_total", wait_ms_total}}},
      {"samples", samples},
      {"bytes", bytes},
      {"throughput",
       {{"samples_per_s", opt(samples_per_s)}, {"samples_per_s_wall", opt(samples_per_s_wall)}}},
      {"stall_fraction", opt(stall_fraction)},
      {"time_to_first_batch_ms", opt(time_to_first_batch_ms)},
      {"latency_ms",
       {{"step", dist(step_ms)},
        {"wait", dist(wait_ms)},
        {"compute", dist(compute_ms)},
        {"stages", stage_times.to_json()}}},
      {"epoch_gaps", epoch_gaps.to_json()},
      {"epoch_boundary", epoch_boundary.to_json()},
      {"workers", workers.to_json()}};
}

RankTimeline rank_timeline(const HookRecords& records, const MainProcess& process,
                           const LoaderChoice& choice, const TimelineOptions& options) {
  RankTimeline t;
  t.pid = process.pid;
  t.rank = process.rank;
  t.loader = choice.chosen;
  t.epoch_boundary.verdict = "no epoch boundary in the measured steps";
  if (!choice.chosen) return t;
  const Scope scope{records, process, *choice.chosen};

  const LoaderRecord* loader = nullptr;
  for (const LoaderRecord& l : records.loaders)
    if (scope.main(l, l.loader)) loader = &l;
  std::vector<const BatchRecord*> batches;
  for (const BatchRecord& b : records.batches)
    if (scope.main(b, b.loader)) batches.push_back(&b);
  std::stable_sort(batches.begin(), batches.end(), [](const auto* a, const auto* b) {
    return a->call_ns != b->call_ns ? a->call_ns < b->call_ns : a->n < b->n;
  });
  std::map<int64_t, const EpochEndRecord*> ends;
  for (const EpochEndRecord& e : records.epoch_ends)
    if (scope.main(e, e.loader)) ends.try_emplace(e.epoch, &e);
  std::map<int64_t, const EpochRecord*> starts;
  for (const EpochRecord& e : records.epochs) {
    if (!scope.main(e, e.loader)) continue;
    starts.try_emplace(e.epoch, &e);
    t.epoch_gaps.iterator_start_ms.push_back(ms(e.ready_ns - e.ns));
  }
  const StopRecord* stop = nullptr;
  for (const StopRecord& s : records.stops)
    if (scope.main(s, s.loader) && stop == nullptr) stop = &s;
  // The end of an epoch's last step: the entry of the `__next__` that raised StopIteration.
  auto end_of = [](const EpochEndRecord& e) { return e.call_ns.value_or(e.ns); };

  // A step ends at the next call of this loader: the next batch's call, the StopIteration
  // call of its epoch, or the stop. A next batch of an epoch whose iterator was created after
  // this batch returned means the loop left this epoch early: that interval is not a step.
  enum class End { known, unfinished, epoch_left };
  auto step_end = [&](size_t j) -> std::pair<End, int64_t> {
    const BatchRecord& b = *batches[j];
    int64_t end = std::numeric_limits<int64_t>::max();
    const BatchRecord* next = nullptr;
    if (j + 1 < batches.size()) {
      next = batches[j + 1];
      end = next->call_ns;
    }
    if (const auto e = ends.find(b.epoch);
        e != ends.end() && end_of(*e->second) >= b.ret_ns && end_of(*e->second) < end) {
      end = end_of(*e->second);
      next = nullptr;
    }
    if (stop != nullptr && stop->ns >= b.ret_ns && stop->ns < end) {
      end = stop->ns;
      next = nullptr;
    }
    if (end == std::numeric_limits<int64_t>::max()) return {End::unfinished, 0};
    if (next != nullptr && next->epoch != b.epoch) {
      const auto s = starts.find(next->epoch);
      if (s == starts.end() || s->second->ns >= b.ret_ns) return {End::epoch_left, 0};
    }
    return {End::known, end};
  };

  struct Measured {
    const BatchRecord* batch;
    int64_t end_ns;
  };
  std::vector<Measured> measured;
  for (size_t j = 0; j < batches.size(); ++j) {
    if (static_cast<int64_t>(j) < options.warmup_steps) {
      t.warmup_batches++;
      continue;
    }
    if (options.max_steps && static_cast<int64_t>(measured.size()) >= *options.max_steps) {
      t.capped_batches++;
      continue;
    }
    const auto [kind, end] = step_end(j);
    if (kind == End::unfinished) {
      t.dropped_unfinished++;
    } else if (kind == End::epoch_left) {
      t.dropped_epoch_left++;
    } else {
      measured.push_back({batches[j], end});
    }
  }

  std::vector<double> step_v, wait_v, compute_v;
  for (size_t k = 0; k < measured.size(); ++k) {
    const BatchRecord& b = *measured[k].batch;
    StepRow row;
    row.step = static_cast<int64_t>(k);
    row.phase = "end_to_end";
    row.rank = t.rank;
    row.t_start_ns = b.call_ns;
    row.wait_ms = ms(b.ret_ns - b.call_ns);
    row.step_ms = ms(measured[k].end_ns - b.call_ns);
    row.compute_ms = row.step_ms - row.wait_ms;
    row.samples = b.size.value_or(0);
    row.bytes = b.bytes;
    t.samples += row.samples;
    t.bytes += row.bytes;
    t.step_ms_total += row.step_ms;
    t.wait_ms_total += row.wait_ms;
    step_v.push_back(row.step_ms);
    wait_v.push_back(row.wait_ms);
    compute_v.push_back(row.compute_ms);
    t.steps.push_back(row);
  }
  t.step_ms = describe(step_v);
  t.wait_ms = describe(wait_v);
  t.compute_ms = describe(compute_v);
  Window window;
  if (!measured.empty()) {
    window = {true, measured.front().batch->call_ns, measured.back().end_ns};
    t.window_start_ns = window.start;
    t.window_end_ns = window.end;
    if (t.step_ms_total > 0) {
      t.samples_per_s = static_cast<double>(t.samples) / (t.step_ms_total / 1e3);
      t.stall_fraction = t.wait_ms_total / t.step_ms_total;
    }
    if (window.end > window.start) {
      t.samples_per_s_wall = static_cast<double>(t.samples) / (ms(window.end - window.start) / 1e3);
    }
  }
  if (!batches.empty()) {
    const auto s = starts.find(batches.front()->epoch);
    if (s != starts.end() && s->second->ns <= batches.front()->ret_ns)
      t.time_to_first_batch_ms = ms(batches.front()->ret_ns - s->second->ns);
  }

  // Epoch gaps: an epoch's end (its last step's end) to the next epoch's first call.
  for (const auto& [epoch, e] : ends) {
    const int64_t from = end_of(*e);
    auto b = std::lower_bound(batches.begin(), batches.end(), from,
                              [](const BatchRecord* x, int64_t ns) { return x->call_ns < ns; });
    while (b != batches.end() && (*b)->epoch == epoch)
      ++b;
    if (b != batches.end()) t.epoch_gaps.gaps_ms.push_back(ms((*b)->call_ns - from));
  }

  // The epoch boundary, like with like: each epoch-first batch against the median wait of the
  // other measured batches of its size.
  EpochBoundary& eb = t.epoch_boundary;
  if (loader != nullptr) eb.persistent_workers = loader->config.persistent_workers;
  if (!ends.empty()) eb.batches_per_epoch = ends.begin()->second->batches;
  std::map<int64_t, std::vector<double>> steady;  // by batch size
  std::vector<const Measured*> firsts;
  for (const Measured& m : measured) {
    if (m.batch->i == 0 && m.batch->n > 0) {
      firsts.push_back(&m);
    } else if (m.batch->i != 0) {
      steady[m.batch->size.value_or(-1)].push_back(ms(m.batch->ret_ns - m.batch->call_ns));
    }
  }
  eb.threshold_ms = std::max(1.0, 0.5 * (t.step_ms.count > 0 ? t.step_ms.p50 : 0.0));
  eb.boundaries = static_cast<int64_t>(firsts.size());
  if (!firsts.empty()) {
    std::vector<double> waits, excess;
    for (const Measured* m : firsts) {
      const double w = ms(m->batch->ret_ns - m->batch->call_ns);
      waits.push_back(w);
      const auto s = steady.find(m->batch->size.value_or(-1));
      if (s == steady.end()) continue;
      const double typical = median(s->second);
      if (!eb.steady_wait_ms) eb.steady_wait_ms = typical;
      excess.push_back(w - typical);
    }
    eb.stall_ms = mean(waits);
    eb.excess_ms = finite(mean(excess));
    if (!eb.excess_ms) {
      eb.verdict = "no other batch of the same size to compare the epoch-first batches with";
    } else if (*eb.excess_ms > eb.threshold_ms) {
      eb.stall = true;
      eb.verdict = fmt::format(
          "boundary stall: the first batch of an epoch waits {:.1f} ms more than the median of "
          "the other batches of its size ({:.1f} ms): the prefetch pipeline starts empty at "
          "every epoch",
          *eb.excess_ms, eb.steady_wait_ms.value_or(0));
      if (eb.persistent_workers == false)
        eb.verdict += " and the workers are started again (persistent_workers=false)";
    } else {
      eb.verdict = "no boundary stall";
    }
  }

  // Stage times in the measured window, and the per-sample rows.
  std::vector<double> fetch_v, collate_v, pin_v, getitem_v;
  for (const FetchRecord& f : records.fetches) {
    if (!scope.loading(f, f.loader) || !window.contains(f.start_ns)) continue;
    fetch_v.push_back(ms(f.end_ns - f.start_ns));
    collate_v.push_back(ms(f.collate_ns));
  }
  for (const PinRecord& p : records.pins) {
    if (scope.main(p, p.loader) && window.contains(p.start_ns))
      pin_v.push_back(ms(p.end_ns - p.start_ns));
  }
  std::set<int64_t> every;
  std::vector<const GetitemRecord*> items;
  std::vector<double> decode_v, augment_v;
  std::map<std::string, std::vector<double>> transform_v;
  for (const GetitemRecord& g : records.getitems) {
    if (!scope.loading(g, g.loader)) continue;
    items.push_back(&g);
    if (!window.contains(g.start_ns)) continue;
    getitem_v.push_back(ms(g.dur_ns));
    every.insert(g.every);
    if (g.items) t.stage_times.getitem_per_call = true;
    if (g.parts.empty()) continue;
    const ItemParts p = item_parts(g);
    if (p.decode_ms) decode_v.push_back(*p.decode_ms);
    if (p.augment_ms) augment_v.push_back(*p.augment_ms);
    for (const auto& [name, ns] : g.parts) {
      if (name != kDecodePart) transform_v[name].push_back(ms(ns));
    }
  }
  t.stage_times.fetch_ms = describe(fetch_v);
  t.stage_times.collate_ms = describe(collate_v);
  t.stage_times.pin_ms = describe(pin_v);
  t.stage_times.getitem_ms = describe(getitem_v);
  t.stage_times.decode_ms = describe(decode_v);
  t.stage_times.augment_ms = describe(augment_v);
  for (auto& [name, v] : transform_v)
    t.stage_times.transform_ms[name] = describe(v);
  t.stage_times.getitem_every.assign(every.begin(), every.end());

  std::stable_sort(items.begin(), items.end(),
                   [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  for (const GetitemRecord* g : items) {
    StageRow r;
    r.key = g->index;
    r.worker = g->worker;
    r.getitem_ms = ms(g->dur_ns);
    const ItemParts p = item_parts(*g);
    r.decode_ms = p.decode_ms;
    r.augment_ms = p.augment_ms;
    // The items the summary's getitem figures count are those of the measured window; the
    // others are kept, named for when they started (docs/external-hook.md).
    r.phase = window.contains(g->start_ns) ? "end_to_end"
              : g->start_ns < window.start ? "warmup"
                                           : "tail";
    r.rank = t.rank;
    r.t_start_ns = g->start_ns;
    r.step = -1;
    // The measured step whose window [call, end) this item started in.
    const auto after =
        std::upper_bound(measured.begin(), measured.end(), g->start_ns,
                         [](int64_t ns, const Measured& m) { return ns < m.batch->call_ns; });
    if (after != measured.begin()) {
      const auto k = static_cast<size_t>(after - measured.begin()) - 1;
      if (g->start_ns < measured[k].end_ns) r.step = static_cast<int64_t>(k);
    }
    t.stages.push_back(std::move(r));
  }

  t.workers = worker_balance(scope, window, loader, t.epoch_boundary.batches_per_epoch);
  return t;
}

// ---------------------------------------------------------------------------------------------

json RankComparison::to_json() const {
  json all = json::array();
  for (const Rank& r : ranks) {
    all.push_back({{"rank", opt(r.rank)},
                   {"pid", r.pid},
                   {"steps", r.steps},
                   {"stall_fraction", opt(r.stall_fraction)},
                   {"step_p50_ms", opt(r.step_p50_ms)},
                   {"step_p99_ms", opt(r.step_p99_ms)},
                   {"samples_per_s", opt(r.samples_per_s)}});
  }
  auto who = [&](const std::optional<size_t>& i) -> json {
    if (!i) return nullptr;
    return {{"rank", opt(ranks[*i].rank)}, {"pid", ranks[*i].pid}};
  };
  return {{"ranks", all},
          {"common_steps", common_steps},
          {"slowest_rank", who(slowest)},
          {"slowest_by", "total step_ms over the common steps"},
          {"slowest_step_ms_total", opt(slowest_total_ms)},
          {"most_waiting_rank", who(most_waiting)},
          {"most_waiting_wait_ms_total", opt(most_waiting_wait_ms)},
          {"step_p50_spread", opt(step_p50_spread)},
          {"straggler", straggler}};
}

RankComparison compare_ranks(const std::vector<RankTimeline>& ranks) {
  RankComparison c;
  std::vector<const RankTimeline*> measured;
  for (const RankTimeline& r : ranks) {
    if (r.steps.empty()) continue;
    measured.push_back(&r);
    RankComparison::Rank x;
    x.pid = r.pid;
    x.rank = r.rank;
    x.steps = static_cast<int64_t>(r.steps.size());
    x.stall_fraction = r.stall_fraction;
    x.step_p50_ms = r.step_ms.p50;
    x.step_p99_ms = r.step_ms.p99;
    x.samples_per_s = r.samples_per_s;
    c.ranks.push_back(x);
  }
  if (measured.empty()) return c;
  size_t common = measured.front()->steps.size();
  for (const RankTimeline* r : measured)
    common = std::min(common, r->steps.size());
  c.common_steps = static_cast<int64_t>(common);
  std::vector<double> p50;
  for (size_t i = 0; i < measured.size(); ++i) {
    double step = 0, wait = 0;
    for (size_t k = 0; k < common; ++k) {
      step += measured[i]->steps[k].step_ms;
      wait += measured[i]->steps[k].wait_ms;
    }
    if (!c.slowest || step > *c.slowest_total_ms) {
      c.slowest = i;
      c.slowest_total_ms = step;
    }
    if (!c.most_waiting || wait > *c.most_waiting_wait_ms) {
      c.most_waiting = i;
      c.most_waiting_wait_ms = wait;
    }
    p50.push_back(measured[i]->step_ms.p50);
  }
  const double typical = median(p50);
  if (typical > 0) c.step_p50_spread = *std::max_element(p50.begin(), p50.end()) / typical;
  std::vector<RankSteps> steps;
  for (const RankTimeline* r : measured) {
    RankSteps s;
    s.rank = r->rank.value_or(-1);
    for (size_t k = 0; k < common; ++k) {
      s.step_ms.push_back(r->steps[k].step_ms);
      s.wait_ms.push_back(r->steps[k].wait_ms);
      s.compute_ms.push_back(r->steps[k].compute_ms);
    }
    steps.push_back(std::move(s));
  }
  c.straggler = straggler_analysis(steps);
  return c;
}

const RankTimeline* JobTimeline::primary() const noexcept {
  if (straggler_rank) {
    for (const RankTimeline& r : ranks)
      if (r.rank == straggler_rank && !r.steps.empty()) return &r;
  }
  for (const RankTimeline& r : ranks)
    if (r.rank == 0) return &r;
  for (const RankTimeline& r : ranks)
    if (!r.steps.empty()) return &r;
  return ranks.empty() ? nullptr : &ranks.front();
}

std::string JobTimeline::primary_why() const {
  const RankTimeline* p = primary();
  if (p == nullptr || !p->rank || ranks.size() < 2) return "";
  const json& s = comparison.straggler;
  const json test =
      s.is_object() && s.contains("test") && s["test"].is_object() ? s["test"] : json::object();
  const auto number = [](const json& v) { return v.is_number() ? v.get<double>() : NAN; };
  if (p->rank != 0 && s.is_object() && s.value("established", false)) {
    return fmt::format(
        "rank {}'s: the established straggler (its step {:.2f}x the median rank's, p = {:.3g}); "
        "under synchronous data parallelism every rank steps at its pace",
        *p->rank, number(s.value("spread", json())), number(test.value("p_adjusted", json())));
  }
  const json why_not = test.value("why_not", json());
  const json slowest = s.is_object() ? s.value("slowest_rank", json()) : json();
  return fmt::format("rank {}'s: no straggler established{}", *p->rank,
                     why_not.is_string() && slowest.is_number()
                         ? fmt::format(" (rank {} is the slowest on average, but {})",
                                       slowest.get<int>(), why_not.get<std::string>())
                         : std::string());
}

json JobTimeline::to_json() const {
  json l = json::array(), r = json::array();
  for (const LoaderChoice& c : loaders)
    l.push_back(c.to_json());
  for (const RankTimeline& t : ranks)
    r.push_back(t.to_json());
  const RankTimeline* p = primary();
  return {{"loaders", l},
          {"ranks", r},
          {"primary_pid", p != nullptr ? json(p->pid) : json(nullptr)},
          {"primary_rank", p != nullptr ? opt(p->rank) : json(nullptr)},
          {"primary_why", primary_why()},
          {"rank_comparison", comparison.to_json()},
          {"warnings", warnings}};
}

JobTimeline job_timeline(const HookRecords& records, const TimelineOptions& options) {
  JobTimeline job;
  bool any_loader = false, any_chosen = false;
  for (const MainProcess& p : main_processes(records)) {
    job.loaders.push_back(choose_loader(records, p, options.loader));
    any_loader = any_loader || !job.loaders.back().loaders.empty();
    any_chosen = any_chosen || job.loaders.back().chosen.has_value();
    job.ranks.push_back(rank_timeline(records, p, job.loaders.back(), options));
  }
  if (!options.loader.empty() && any_loader && !any_chosen) {
    job.warnings.push_back(
        fmt::format("--loader {} matched no loader of any process of the job", options.loader));
  }
  for (const RankTimeline& r : job.ranks) {
    if (r.dropped_unfinished > 0) {
      job.warnings.push_back(fmt::format(
          "pid {}: {} batch(es) with no later call, epoch_end or stop (the job was killed, or "
          "is still running) are not steps",
          r.pid, r.dropped_unfinished));
    }
  }
  job.comparison = compare_ranks(job.ranks);
  const json& s = job.comparison.straggler;
  if (s.is_object() && s.value("established", false) && s.value("slowest_rank", json()).is_number())
    job.straggler_rank = s["slowest_rank"].get<int>();
  return job;
}

// ---------------------------------------------------------------------------------------------

json HookStatus::to_json() const {
  json errs = json::array();
  for (const ErrorRecord& e : errors)
    errs.push_back({{"pid", e.pid}, {"where", e.where}, {"message", e.message}, {"ns", e.ns}});
  json missing = json::array();
  for (const PartialRecord& p : partial)
    missing.push_back({{"pid", p.pid}, {"what", p.what}, {"measures", p.measures}, {"why", p.why}});
  return {{"status", status},
          {"files", files},
          {"lines", lines},
          {"cut_lines", cut_lines},
          {"unknown_records", unknown_records},
          {"errors", errs},
          {"unpatched", missing}};
}

namespace {

// "partial (torch 2.99): X (why): not measured: Y; ...": what the hook could not wrap,
// once per name, in the order the processes met them.
std::string partial_status(const HookRecords& records, std::vector<PartialRecord>& partial) {
  std::set<std::string> seen;
  std::string parts;
  for (const PartialRecord& p : records.partials) {
    if (!seen.insert(p.what).second) continue;
    partial.push_back(p);
    parts += fmt::format("{}{} ({}): not measured: {}", parts.empty() ? "" : "; ", p.what, p.why,
                         p.measures);
  }
  const std::string torch = !records.versions.empty() && records.versions.front().torch
                                ? " (torch " + *records.versions.front().torch + ")"
                                : "";
  return fmt::format("partial{}: {}", torch, parts);
}

}  // namespace

HookStatus hook_status(const HookRecords& records) {
  HookStatus s;
  s.files = static_cast<int64_t>(records.pids.size());
  s.lines = records.lines;
  s.cut_lines = records.cut_lines;
  s.unknown_records = records.unknown;
  s.errors = records.errors;
  std::stable_sort(s.errors.begin(), s.errors.end(),
                   [](const ErrorRecord& a, const ErrorRecord& b) { return a.ns < b.ns; });
  const bool timing = !records.loaders.empty() || !records.epochs.empty() ||
                      !records.batches.empty() || !records.epoch_ends.empty() ||
                      !records.fetches.empty() || !records.getitems.empty() ||
                      !records.pins.empty() || !records.stops.empty();
  if (timing && !records.partials.empty()) {
    s.status = partial_status(records, s.partial);
  } else if (timing) {
    s.status = "ok";
  } else if (!s.errors.empty()) {
    s.status = fmt::format("unavailable: {} (hook point {})", s.errors.front().message,
                           s.errors.front().where);
  } else {
    s.status =
        "unavailable: no hook records: the job's Python never imported torch or built no "
        "DataLoader, or the hook was not loaded (PYTHONPATH not reaching the job, or python "
        "-I/-E/-S)";
  }
  return s;
}

json JobDescription::to_json() const {
  json l = json::array();
  for (const Loader& x : loaders) {
    json overrides = {{"applied", x.record.applied}, {"rejected", x.record.rejected}};
    if (!x.record.original.is_null()) overrides["original"] = x.record.original;
    l.push_back({{"pid", x.pid},
                 {"rank", opt(x.rank)},
                 {"loader", x.record.loader},
                 {"followed", x.followed},
                 {"origin", x.record.origin},
                 {"stack", x.record.stack},
                 {"config", x.record.config.raw},
                 {"overrides", overrides},
                 {"max_batches_follow", x.record.follow}});
  }
  return {{"hook", hook.to_json()},
          {"versions", versions ? versions->to_json() : json(nullptr)},
          {"versions_differ", versions_differ},
          {"loaders", l}};
}

JobDescription describe_job(const HookRecords& records, const std::vector<LoaderChoice>& choices) {
  JobDescription d;
  d.hook = hook_status(records);
  std::map<int, int> section_of;  // main pid -> its section
  for (const MainProcess& p : main_processes(records))
    section_of.try_emplace(p.pid, p.section);
  for (const LoaderChoice& c : choices) {
    const auto s = section_of.find(c.pid);
    if (s == section_of.end()) continue;
    for (const VersionsRecord& v : records.versions) {
      if (v.section != s->second) continue;
      if (!d.versions) {
        d.versions = v;
      } else if (v.to_json() != d.versions->to_json()) {
        d.versions_differ = true;
      }
    }
    for (const LoaderRecord& l : records.loaders) {
      if (l.section != s->second) continue;
      d.loaders.push_back({c.pid, c.rank, c.chosen == l.loader, l});
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------

std::vector<UssPoint> uss_series(const std::vector<ResourceRow>& rows, int pid, int64_t t_begin_ns,
                                 int64_t t_end_ns) {
  std::vector<UssPoint> out;
  for (const ResourceRow& r : rows) {
    if (r.pid != pid || !r.uss_kb || r.t_ns < t_begin_ns || r.t_ns > t_end_ns) continue;
    out.push_back({r.t_ns, *r.uss_kb});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const UssPoint& a, const UssPoint& b) { return a.t_ns < b.t_ns; });
  return out;
}

json CowGrowth::to_json() const {
  return {{"pid", pid},
          {"points", points},
          {"span_s", span_s},
          {"slope_mib_per_min", opt(slope_mib_per_min)},
          {"slope_ci95_low_mib_per_min", opt(slope_ci95_low_mib_per_min)},
          {"slope_ci95_high_mib_per_min", opt(slope_ci95_high_mib_per_min)},
          {"growth_mib", opt(growth_mib)},
          {"threshold_mib_per_min", threshold_mib_per_min},
          {"growing", growing},
          {"verdict", verdict}};
}

CowGrowth cow_growth(int pid, const std::vector<UssPoint>& series, double threshold_mib_per_min) {
  CowGrowth g;
  g.pid = pid;
  g.points = series.size();
  g.threshold_mib_per_min = threshold_mib_per_min;
  if (series.size() < 2) {
    g.verdict = "too few USS samples for a slope";
    return g;
  }
  g.span_s = static_cast<double>(series.back().t_ns - series.front().t_ns) / 1e9;
  const auto n = static_cast<double>(series.size());
  double tm = 0, ym = 0;
  for (const UssPoint& p : series) {
    tm += static_cast<double>(p.t_ns - series.front().t_ns) / 60e9;
    ym += static_cast<double>(p.uss_kb) / 1024.0;
  }
  tm /= n;
  ym /= n;
  double sxx = 0, sxy = 0;
  for (const UssPoint& p : series) {
    const double dt = static_cast<double>(p.t_ns - series.front().t_ns) / 60e9 - tm;
    sxx += dt * dt;
    sxy += dt * (static_cast<double>(p.uss_kb) / 1024.0 - ym);
  }
  if (sxx <= 0) {
    g.verdict = "every USS sample at the same instant: no slope";
    return g;
  }
  const double slope = sxy / sxx;
  g.slope_mib_per_min = slope;
  g.growth_mib = slope * g.span_s / 60.0;
  if (series.size() >= 3) {
    double ss = 0;
    for (const UssPoint& p : series) {
      const double dt = static_cast<double>(p.t_ns - series.front().t_ns) / 60e9 - tm;
      const double r = static_cast<double>(p.uss_kb) / 1024.0 - (ym + slope * dt);
      ss += r * r;
    }
    const double se = std::sqrt(ss / (n - 2) / sxx);
    const double q = stats::t_quantile(0.975, n - 2);
    g.slope_ci95_low_mib_per_min = slope - q * se;
    g.slope_ci95_high_mib_per_min = slope + q * se;
  }
  if (series.size() < kCowMinPoints || g.span_s < kCowMinSpanS) {
    g.verdict = fmt::format(
        "too short to tell: {} USS samples over {:.0f} s (at least {} over {:.0f} s are needed)",
        series.size(), g.span_s, kCowMinPoints, kCowMinSpanS);
    return g;
  }
  g.growing = slope > threshold_mib_per_min && g.slope_ci95_low_mib_per_min.value_or(0) > 0;
  if (g.growing) {
    g.verdict = fmt::format(
        "USS grows {:.1f} MiB/min (95% CI {:.1f} to {:.1f}) over {:.0f} s, above {:g} MiB/min: "
        "copy-on-write of the dataset's Python objects, whose refcounts the worker touches "
        "(PyTorch issue #13246); hold per-sample metadata in numpy arrays or one bytes buffer, "
        "not in lists or dicts of Python objects",
        slope, *g.slope_ci95_low_mib_per_min, *g.slope_ci95_high_mib_per_min, g.span_s,
        threshold_mib_per_min);
  } else {
    g.verdict = fmt::format("no copy-on-write growth: USS changes {:.1f} MiB/min over {:.0f} s",
                            slope, g.span_s);
  }
  return g;
}

}  // namespace mmprof::external
