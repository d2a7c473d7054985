#include "run/epoch_boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"

namespace mmprof {
namespace {

using Timed = EpochBoundaryTally::Timed;

// The waits, fill times and their differences of `batches`, each sorted.
struct Columns {
  std::vector<double> wait, fill, unexplained;
};

Columns columns(const std::vector<Timed>& batches) {
  Columns c;
  for (const Timed& t : batches) {
    c.wait.push_back(t.wait_ms);
    c.fill.push_back(t.fill_ms);
    c.unexplained.push_back(t.wait_ms - t.fill_ms);
  }
  for (std::vector<double>* v : {&c.wait, &c.fill, &c.unexplained})
    std::sort(v->begin(), v->end());
  return c;
}

std::string verdict(bool stall, double unexplained_ms, double fill_ms, bool persistent_workers) {
  if (!stall) return "no boundary stall";
  std::string v = fmt::format(
      "boundary stall: the first batch of an epoch waits {:.1f} ms more than its workers took to "
      "fill it ({:.1f} ms)",
      unexplained_ms, fill_ms);
  if (!persistent_workers)
    v += ": the loader starts its workers again (loader.persistent_workers false)";
  return v;
}

// One phase's judgement (EpochBoundaryTally::figures()).
BoundaryJudgement judge_epoch_boundary(const std::vector<Timed>& firsts,
                                       const std::map<int64_t, std::vector<Timed>>& others,
                                       bool persistent_workers) {
  BoundaryJudgement j;
  j.boundaries = static_cast<int64_t>(firsts.size());
  j.threshold_ms = EpochBoundaryTally::kFloorMs;
  j.verdict = "no epoch boundary in the measured steps";
  if (firsts.empty()) {
    // The steady wait alone still describes the phase (a run shorter than an epoch).
    std::vector<Timed> all;
    for (const auto& [size, batches] : others)
      all.insert(all.end(), batches.begin(), batches.end());
    j.steady_wait_ms = finite(quantile_sorted(columns(all).wait, 0.5));
    return j;
  }
  const int64_t size = firsts.front().size;
  const auto same = others.find(size);
  const Columns first = columns(firsts);
  const Columns like = columns(same != others.end() ? same->second : std::vector<Timed>{});
  const double stall_ms = mean(first.wait);
  const double steady = quantile_sorted(like.wait, 0.5);  // NaN when none
  const double fill_ms = mean(first.fill);
  const double unexplained_ms = mean(first.unexplained);
  // The hand-over delay of same-size batches: how far beyond its fill time a batch may wait
  // without anything happening at the boundary.
  const double noise =
      like.wait.empty() ? 0.0 : std::max(0.0, quantile_sorted(like.unexplained, 0.9));
  const double threshold = std::max(EpochBoundaryTally::kFloorMs, noise);
  const bool stall = unexplained_ms > threshold;
  j.batch_size = size;
  j.stall_ms = stall_ms;
  j.steady_wait_ms = finite(steady);
  j.excess_ms = finite(stall_ms - steady);
  j.fill_ms = fill_ms;
  j.unexplained_ms = unexplained_ms;
  if (!like.wait.empty()) j.noise_ms = noise;
  j.threshold_ms = threshold;
  j.stall = stall;
  j.verdict = verdict(stall, unexplained_ms, fill_ms, persistent_workers);
  return j;
}

}  // namespace

void EpochBoundaryTally::observe(const std::string& phase, const Batch& batch,
                                 uint64_t first_batch_id, bool measured) {
  Waits& w = phases_[phase];
  const bool start_up = batch.batch_id == first_batch_id;
  const bool boundary = !start_up && w.last_epoch.has_value() && batch.epoch != *w.last_epoch;
  w.last_epoch = batch.epoch;
  if (!measured || start_up) return;  // the loader's first batch is neither
  Timed t{batch.size, batch.wait_ms, batch.collate_ms};
  for (const SampleInfo& s : batch.samples)
    t.fill_ms += s.read_ms + s.decode_ms + s.augment_ms;
  if (boundary) {
    w.boundary.push_back(t);
  } else {
    w.steady[t.size].push_back(t);
  }
}

EpochBoundaryFigures EpochBoundaryTally::figures(bool persistent_workers,
                                                 size_t batches_per_epoch) const {
  EpochBoundaryFigures out;
  out.persistent_workers = persistent_workers;
  out.batches_per_epoch = static_cast<int64_t>(batches_per_epoch);
  for (const auto& [phase, w] : phases_)
    out.phases[phase] = judge_epoch_boundary(w.boundary, w.steady, persistent_workers);
  return out;
}

}  // namespace mmprof
