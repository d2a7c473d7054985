#include "external/rank_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "rundir/summary.hpp"
#include "stats/inference.hpp"

namespace mmprof::external {
namespace {

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

using Window = TimeWindow;

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
  const double window_ms = window.ms();
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

// The followed loader's records of one main process, as the steps need them.
struct LoaderRecords {
  const LoaderRecord* loader = nullptr;
  std::vector<const BatchRecord*> batches;        // by call time
  std::map<int64_t, const EpochEndRecord*> ends;  // by epoch, the first of each
  std::map<int64_t, const EpochRecord*> starts;   // by epoch, the first of each
  const StopRecord* stop = nullptr;               // the first
};

LoaderRecords loader_records(const Scope& scope) {
  const HookRecords& records = scope.records;
  LoaderRecords r;
  for (const LoaderRecord& l : records.loaders)
    if (scope.main(l, l.loader)) r.loader = &l;
  for (const BatchRecord& b : records.batches)
    if (scope.main(b, b.loader)) r.batches.push_back(&b);
  std::stable_sort(r.batches.begin(), r.batches.end(), [](const auto* a, const auto* b) {
    return a->call_ns != b->call_ns ? a->call_ns < b->call_ns : a->n < b->n;
  });
  for (const EpochEndRecord& e : records.epoch_ends)
    if (scope.main(e, e.loader)) r.ends.try_emplace(e.epoch, &e);
  for (const EpochRecord& e : records.epochs)
    if (scope.main(e, e.loader)) r.starts.try_emplace(e.epoch, &e);
  for (const StopRecord& s : records.stops)
    if (scope.main(s, s.loader) && r.stop == nullptr) r.stop = &s;
  return r;
}

// The end of an epoch's last step: the entry of the `__next__` that raised StopIteration.
int64_t end_of(const EpochEndRecord& e) {
  return e.call_ns.value_or(e.ns);
}

// A step ends at the next call of this loader: the next batch's call, the StopIteration call of
// its epoch, or the stop. A next batch of an epoch whose iterator was created after this batch
// returned means the loop left this epoch early: that interval is not a step.
enum class End { known, unfinished, epoch_left };
std::pair<End, int64_t> step_end(const LoaderRecords& r, size_t j) {
  const BatchRecord& b = *r.batches[j];
  int64_t end = std::numeric_limits<int64_t>::max();
  const BatchRecord* next = nullptr;
  if (j + 1 < r.batches.size()) {
    next = r.batches[j + 1];
    end = next->call_ns;
  }
  if (const auto e = r.ends.find(b.epoch);
      e != r.ends.end() && end_of(*e->second) >= b.ret_ns && end_of(*e->second) < end) {
    end = end_of(*e->second);
    next = nullptr;
  }
  if (r.stop != nullptr && r.stop->ns >= b.ret_ns && r.stop->ns < end) {
    end = r.stop->ns;
    next = nullptr;
  }
  if (end == std::numeric_limits<int64_t>::max()) return {End::unfinished, 0};
  if (next != nullptr && next->epoch != b.epoch) {
    const auto s = r.starts.find(next->epoch);
    if (s == r.starts.end() || s->second->ns >= b.ret_ns) return {End::epoch_left, 0};
  }
  return {End::known, end};
}

struct Measured {
  const BatchRecord* batch;
  int64_t end_ns;
  double wait_ms() const { return ms(batch->ret_ns - batch->call_ns); }
};

// The measured steps, after warm-up and up to --steps; the batches left out are counted in `t`.
std::vector<Measured> measured_steps(const LoaderRecords& r, const TimelineOptions& options,
                                     RankTimeline& t) {
  std::vector<Measured> measured;
  for (size_t j = 0; j < r.batches.size(); ++j) {
    if (static_cast<int64_t>(j) < options.warmup_steps) {
      t.warmup_batches++;
      continue;
    }
    if (options.max_steps && static_cast<int64_t>(measured.size()) >= *options.max_steps) {
      t.capped_batches++;
      continue;
    }
    const auto [kind, end] = step_end(r, j);
    if (kind == End::unfinished) {
      t.dropped_unfinished++;
    } else if (kind == End::epoch_left) {
      t.dropped_epoch_left++;
    } else {
      measured.push_back({r.batches[j], end});
    }
  }
  return measured;
}

// steps.csv's rows of the measured steps, their totals, distributions and rates; returns their
// window (unknown without a measured step).
Window add_steps(const std::vector<Measured>& measured, RankTimeline& t) {
  std::vector<double> step_v, wait_v, compute_v;
  for (size_t k = 0; k < measured.size(); ++k) {
    const BatchRecord& b = *measured[k].batch;
    StepRow row;
    row.step = static_cast<int64_t>(k);
    row.phase = "end_to_end";
    row.rank = t.rank;
    row.t_start_ns = b.call_ns;
    row.wait_ms = measured[k].wait_ms();
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
  if (measured.empty()) return {};
  const Window window{true, measured.front().batch->call_ns, measured.back().end_ns};
  t.window_start_ns = window.start;
  t.window_end_ns = window.end;
  if (t.step_ms_total > 0) {
    t.samples_per_s = static_cast<double>(t.samples) / (t.step_ms_total / 1e3);
    t.stall_fraction = t.wait_ms_total / t.step_ms_total;
  }
  if (window.end > window.start)
    t.samples_per_s_wall = static_cast<double>(t.samples) / (ms(window.end - window.start) / 1e3);
  return window;
}

// From the first `__iter__` to the first batch returned.
std::optional<double> time_to_first_batch(const LoaderRecords& r) {
  if (r.batches.empty()) return std::nullopt;
  const BatchRecord& first = *r.batches.front();
  const auto s = r.starts.find(first.epoch);
  if (s == r.starts.end() || s->second->ns > first.ret_ns) return std::nullopt;
  return ms(first.ret_ns - s->second->ns);
}

// Epoch gaps: an epoch's end (its last step's end) to the next epoch's first call; and every
// iterator's start.
EpochGaps epoch_gaps(const Scope& scope, const LoaderRecords& r) {
  EpochGaps gaps;
  for (const EpochRecord& e : scope.records.epochs)
    if (scope.main(e, e.loader)) gaps.iterator_start_ms.push_back(ms(e.ready_ns - e.ns));
  for (const auto& [epoch, e] : r.ends) {
    const int64_t from = end_of(*e);
    auto b = std::lower_bound(r.batches.begin(), r.batches.end(), from,
                              [](const BatchRecord* x, int64_t ns) { return x->call_ns < ns; });
    while (b != r.batches.end() && (*b)->epoch == epoch)
      ++b;
    if (b != r.batches.end()) gaps.gaps_ms.push_back(ms((*b)->call_ns - from));
  }
  return gaps;
}

// The epoch boundary, like with like: each epoch-first batch against the median wait of the
// other measured batches of its size.
EpochBoundary epoch_boundary(const LoaderRecords& r, const std::vector<Measured>& measured,
                             const Distribution& step_ms) {
  EpochBoundary eb;
  eb.verdict = "no epoch boundary in the measured steps";
  if (r.loader != nullptr) eb.persistent_workers = r.loader->config.persistent_workers;
  if (!r.ends.empty()) eb.batches_per_epoch = r.ends.begin()->second->batches;
  std::map<int64_t, std::vector<double>> steady;  // by batch size
  std::vector<const Measured*> firsts;
  for (const Measured& m : measured) {
    if (m.batch->i == 0 && m.batch->n > 0) {
      firsts.push_back(&m);
    } else if (m.batch->i != 0) {
      steady[m.batch->size.value_or(-1)].push_back(m.wait_ms());
    }
  }
  eb.threshold_ms = std::max(1.0, 0.5 * (step_ms.count > 0 ? step_ms.p50 : 0.0));
  eb.boundaries = static_cast<int64_t>(firsts.size());
  if (firsts.empty()) return eb;
  std::vector<double> waits, excess;
  for (const Measured* m : firsts) {
    waits.push_back(m->wait_ms());
    const auto s = steady.find(m->batch->size.value_or(-1));
    if (s == steady.end()) continue;
    const double typical = median(s->second);
    if (!eb.steady_wait_ms) eb.steady_wait_ms = typical;
    excess.push_back(m->wait_ms() - typical);
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
  return eb;
}

// Stage times in the measured window.
StageTimes stage_times(const Scope& scope, const Window& window) {
  std::vector<double> fetch_v, collate_v, pin_v, getitem_v;
  for (const FetchRecord& f : scope.records.fetches) {
    if (!scope.loading(f, f.loader) || !window.contains(f.start_ns)) continue;
    fetch_v.push_back(ms(f.end_ns - f.start_ns));
    collate_v.push_back(ms(f.collate_ns));
  }
  for (const PinRecord& p : scope.records.pins) {
    if (scope.main(p, p.loader) && window.contains(p.start_ns))
      pin_v.push_back(ms(p.end_ns - p.start_ns));
  }
  StageTimes out;
  std::set<int64_t> every;
  std::vector<double> decode_v, augment_v;
  std::map<std::string, std::vector<double>> transform_v;
  for (const GetitemRecord& g : scope.records.getitems) {
    if (!scope.loading(g, g.loader) || !window.contains(g.start_ns)) continue;
    getitem_v.push_back(ms(g.dur_ns));
    every.insert(g.every);
    if (g.items) out.getitem_per_call = true;
    const ItemParts p = item_parts(g);
    if (p.decode_ms) decode_v.push_back(*p.decode_ms);
    if (p.augment_ms) augment_v.push_back(*p.augment_ms);
    for (const auto& [name, ns] : g.parts) {
      if (name != kDecodePart) transform_v[name].push_back(ms(ns));
    }
  }
  out.fetch_ms = describe(fetch_v);
  out.collate_ms = describe(collate_v);
  out.pin_ms = describe(pin_v);
  out.getitem_ms = describe(getitem_v);
  out.decode_ms = describe(decode_v);
  out.augment_ms = describe(augment_v);
  for (auto& [name, v] : transform_v)
    out.transform_ms[name] = describe(v);
  out.getitem_every.assign(every.begin(), every.end());
  return out;
}

// stages.csv's rows: every getitem of the followed loader, by start time, with the measured step
// it started in (-1 outside them).
std::vector<StageRow> stage_rows(const Scope& scope, const Window& window,
                                 const std::vector<Measured>& measured) {
  std::vector<const GetitemRecord*> items;
  for (const GetitemRecord& g : scope.records.getitems)
    if (scope.loading(g, g.loader)) items.push_back(&g);
  std::stable_sort(items.begin(), items.end(),
                   [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  std::vector<StageRow> rows;
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
    r.rank = scope.process.rank;
    r.t_start_ns = g->start_ns;
    r.step = -1;
    const auto after =
        std::upper_bound(measured.begin(), measured.end(), g->start_ns,
                         [](int64_t ns, const Measured& m) { return ns < m.batch->call_ns; });
    if (after != measured.begin()) {
      const auto k = static_cast<size_t>(after - measured.begin()) - 1;
      if (g->start_ns < measured[k].end_ns) r.step = static_cast<int64_t>(k);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

RankTimeline rank_timeline(const HookRecords& records, const MainProcess& process,
                           const LoaderChoice& choice, const TimelineOptions& options) {
  RankTimeline t;
  t.pid = process.pid;
  t.rank = process.rank;
  t.loader = choice.chosen;
  t.epoch_boundary.verdict = "no epoch boundary in the measured steps";
  if (!choice.chosen) return t;
  const Scope scope{records, process, *choice.chosen};
  const LoaderRecords r = loader_records(scope);
  const std::vector<Measured> measured = measured_steps(r, options, t);
  const Window window = add_steps(measured, t);
  t.time_to_first_batch_ms = time_to_first_batch(r);
  t.epoch_gaps = epoch_gaps(scope, r);
  t.epoch_boundary = epoch_boundary(r, measured, t.step_ms);
  t.stage_times = stage_times(scope, window);
  t.stages = stage_rows(scope, window, measured);
  t.workers = worker_balance(scope, window, r.loader, t.epoch_boundary.batches_per_epoch);
  return t;
}

EpochGapFigures EpochGaps::figures() const {
  const Distribution d = describe(gaps_ms);
  const Distribution it = describe(iterator_start_ms);
  double total = 0;
  for (const double g : gaps_ms)
    total += g;
  const auto v = [](const Distribution& x, double y) {
    return x.count == 0 ? std::nullopt : std::optional(y);
  };
  return {.count = static_cast<int64_t>(d.count),
          .mean_ms = v(d, d.mean),
          .max_ms = v(d, d.max),
          .total_ms = v(d, total),
          .iterator_starts = static_cast<int64_t>(it.count),
          .iterator_start_mean_ms = v(it, it.mean),
          .iterator_start_max_ms = v(it, it.max)};
}

EpochBoundaryFigures EpochBoundary::figures() const {
  EpochBoundaryFigures f;
  f.persistent_workers = persistent_workers;
  f.batches_per_epoch = batches_per_epoch;
  BoundaryJudgement& loop = f.loop.emplace();
  loop.boundaries = boundaries;
  loop.stall_ms = stall_ms;
  loop.steady_wait_ms = steady_wait_ms;
  loop.excess_ms = excess_ms;
  loop.threshold_ms = threshold_ms;
  loop.stall = stall;
  loop.verdict = verdict;
  return f;
}

JobStageTimes StageTimes::figures() const {
  JobStageTimes t{.fetch = rundir::spread_of(fetch_ms),
                  .collate = rundir::spread_of(collate_ms),
                  .pin = rundir::spread_of(pin_ms),
                  .getitem = rundir::spread_of(getitem_ms),
                  .decode = rundir::spread_of(decode_ms),
                  .augment = rundir::spread_of(augment_ms),
                  .transforms = {},
                  .getitem_every = getitem_every,
                  .getitem_per_call = getitem_per_call};
  for (const auto& [name, d] : transform_ms)
    t.transforms[name] = rundir::spread_of(d);
  return t;
}

std::optional<double> RankTimeline::window_ms() const {
  if (!window_start_ns || !window_end_ns) return std::nullopt;
  return ms(*window_end_ns - *window_start_ns);
}

JobRank RankTimeline::figures() const {
  return {.rank = rank,
          .pid = pid,
          .loader = loader,
          .measured_steps = static_cast<int64_t>(steps.size()),
          .warmup_batches = warmup_batches,
          .capped_batches = capped_batches,
          .dropped_unfinished = dropped_unfinished,
          .dropped_epoch_left = dropped_epoch_left,
          .window_start_ns = window_start_ns,
          .window_end_ns = window_end_ns,
          .window_ms = window_ms(),
          .step_ms_total = step_ms_total,
          .wait_ms_total = wait_ms_total,
          .samples = samples,
          .bytes = bytes,
          .samples_per_s = samples_per_s,
          .samples_per_s_wall = samples_per_s_wall,
          .stall_fraction = stall_fraction,
          .time_to_first_batch_ms = time_to_first_batch_ms,
          .step = rundir::spread_of(step_ms),
          .wait = rundir::spread_of(wait_ms),
          .compute = rundir::spread_of(compute_ms),
          .stages = stage_times.figures(),
          .epoch_gaps = epoch_gaps.figures(),
          .epoch_boundary = epoch_boundary.figures(),
          .workers = workers};
}

}  // namespace mmprof::external
