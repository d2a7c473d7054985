#include "run/phase_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include "measure/resource_summary.hpp"
#include "rundir/summary.hpp"
#include "rundir/summary_keys.hpp"
#include "stats/descriptive.hpp"
#include "stats/shuffle_quality.hpp"

namespace mmprof {
namespace {

using nlohmann::json;

// A phase's rates over its measured window; none when it did not run or its window was empty.
PhaseRates phase_rates(const PhaseMetrics& p) {
  PhaseRates r;
  if (p.ran && p.window_s > 0) {
    r.samples_per_s = p.samples_per_s();
    r.batches_per_s = p.batches_per_s();
    r.mb_per_s = p.mb_per_s();
  }
  // Delivered batches are short at the end of an epoch (loader.drop_last false) and when samples
  // fail: the mean of what was delivered, not loader.batch_size.
  if (p.ran && p.batches > 0)
    r.samples_per_batch = static_cast<double>(p.samples) / static_cast<double>(p.batches);
  return r;
}

std::optional<PhaseCounts> phase_counts(const PhaseMetrics& p) {
  if (!p.ran) return std::nullopt;
  return PhaseCounts{
      .steps = p.steps,
      .batches = p.batches,
      .samples = p.samples,
      .time_to_first_batch_ms =
          p.time_to_first_batch_ms >= 0 ? std::optional(p.time_to_first_batch_ms) : std::nullopt,
      .bytes = p.bytes,
      .window_s = p.window_s,
      .warmup_steps = p.warmup_steps,
      .warmup_s = p.warmup_s,
      .failures = p.failures,
      .minflt_per_sample = p.samples > 0 ? std::optional(static_cast<double>(p.minflt) /
                                                         static_cast<double>(p.samples))
                                         : std::nullopt,
      .majflt = p.majflt};
}

// NVML's readings of a phase: utilisation averaged, memory at its largest; or why none.
std::optional<NvmlFigures> nvml_summary(const std::vector<json>& readings) {
  if (readings.empty()) return std::nullopt;
  NvmlFigures out;
  if (readings.front().contains("reason")) {
    out.reason = readings.front().value("reason", "");
    return out;
  }
  out.gpu = readings.front().value("name", "");
  out.readings = static_cast<int64_t>(readings.size());
  out.source = readings.front().value("source", "") +
               ", every 10 measured steps: utilisation averaged, memory at its peak";
  for (const auto& [key, member] : rundir::kNvmlFigures) {
    const bool peak = std::string_view(key).ends_with("_mib");
    double sum = 0, top = 0;
    int n = 0;
    for (const auto& r : readings) {
      if (!r.contains(key) || !r[key].is_number()) continue;
      const double v = r[key].get<double>();
      sum += v;
      top = std::max(top, v);
      ++n;
    }
    if (n > 0) out.*member = peak ? top : sum / n;
  }
  return out;
}

}  // namespace

void PhaseMetrics::add_batch(const Batch& batch, bool pinned) {
  batches++;
  continued_reads += batch.continued_reads;
  delivered_batches.push_back(static_cast<uint32_t>(batch.samples.size()));
  media_reads += batch.media_reads;
  failures += static_cast<int64_t>(batch.failures.size());
  collate_ms.push_back(batch.collate_ms);
  if (pinned) pin_ms.push_back(batch.pin_ms);
  if (batch.device_decode_ms > 0) device_decode_ms.push_back(batch.device_decode_ms);
  device_decode_fallbacks += batch.device_decode_fallbacks;
  workers.add_batch(batch);
  for (const auto& s : batch.samples) {
    delivered.push_back(s.index);
    classes.add(s);
    read_ms.push_back(s.read_ms);
    read_first_ns = std::min(read_first_ns, s.t_start_ns);
    read_last_ns =
        std::max(read_last_ns, s.t_start_ns + static_cast<int64_t>(std::llround(s.read_ms * 1e6)));
    decode_ms.push_back(s.decode_ms);
    augment_ms.push_back(s.augment_ms);
    minflt += s.minflt;
    majflt += s.majflt;
  }
}

void PhaseMetrics::add_step_span(int64_t t0_ns, int64_t t_end_ns) {
  if (window_start_ns < 0) window_start_ns = t0_ns;
  window_end_ns = t_end_ns;
  window_s = static_cast<double>(t_end_ns - window_start_ns) / 1e9;
}

double PhaseMetrics::read_span_s() const {
  return read_last_ns > read_first_ns ? static_cast<double>(read_last_ns - read_first_ns) / 1e9 : 0;
}

double PhaseMetrics::samples_per_s() const {
  return window_s > 0 ? static_cast<double>(samples) / window_s : 0;
}
double PhaseMetrics::batches_per_s() const {
  return window_s > 0 ? static_cast<double>(batches) / window_s : 0;
}
double PhaseMetrics::mb_per_s() const {
  return window_s > 0 ? static_cast<double>(bytes) / 1e6 / window_s : 0;
}

namespace {

// Where decode ran in the loader's phase (the pipeline's, else the end-to-end one's), and what it
// took from training.
DecodePlacement decode_placement(const PhaseMetrics& compute, const PhaseMetrics& pipeline,
                                 const PhaseMetrics& end_to_end, StepKind step_kind) {
  const PhaseMetrics& p = pipeline.ran ? pipeline : end_to_end;
  DecodePlacement placement;
  placement.where = p.decode_placement;
  placement.phase = p.name;
  placement.device_decode_ms = rundir::spread_of(describe(p.device_decode_ms));
  placement.cpu_fallbacks = p.device_decode_fallbacks;
  placement.cpu_fallback_reason = p.device_decode_fallback_reason;
  placement.nvml = nvml_summary(p.nvml_readings);
  // What decode (or anything else in the loop) takes from training: the step's compute with
  // the loader running, against the compute phase alone. A sleep computes nothing: what makes
  // it longer is a late wake-up (the run queue), not a resource decode took.
  const double alone = compute.compute_ms.empty() ? NAN : median(compute.compute_ms);
  const double loaded = end_to_end.compute_ms.empty() ? NAN : median(end_to_end.compute_ms);
  ComputeInflation& inflation = placement.compute_inflation;
  inflation.compute_phase_p50_ms = finite(alone);
  inflation.end_to_end_p50_ms = finite(loaded);
  if (step_kind != StepKind::sleep && step_kind != StepKind::none) {
    inflation.pct = finite(100 * (loaded / alone - 1));
  } else {
    inflation.why_null = fmt::format(
        "step.kind={} computes nothing decode could take (a sleep's lengthening is a late "
        "wake-up)",
        to_string(step_kind));
  }
  return placement;
}

}  // namespace

Summary summarize(const PhaseMetrics& compute, const PhaseMetrics& pipeline,
                  const PhaseMetrics& end_to_end, const RunOutcome& outcome,
                  const ResourceUsage* resources) {
  Summary s;
  s.status = outcome.status;
  s.message = outcome.message;
  for (const PhaseMetrics* p : {&compute, &pipeline, &end_to_end})
    s.phases[p->name] = phase_counts(*p);

  s.throughput.compute = phase_rates(compute);
  s.throughput.pipeline = phase_rates(pipeline);
  s.throughput.end_to_end = phase_rates(end_to_end);
  // DS-Analyzer's prediction: the slower of the data pipeline and the compute ceiling.
  const auto& compute_rate = s.throughput.compute.samples_per_s;
  const auto& pipeline_rate = s.throughput.pipeline.samples_per_s;
  if (compute_rate && pipeline_rate)
    s.throughput.predicted_end_to_end = std::min(*compute_rate, *pipeline_rate);

  const double e2e_step_total = sum(end_to_end.step_ms);
  if (end_to_end.ran && e2e_step_total > 0)
    s.stall_fraction = sum(end_to_end.wait_ms) / e2e_step_total;
  if (pipeline.time_to_first_batch_ms >= 0)
    s.time_to_first_batch_ms = pipeline.time_to_first_batch_ms;

  // Step-level latencies come from the end-to-end phase when a step exists, else the pipeline.
  const PhaseMetrics& steps = end_to_end.ran ? end_to_end : pipeline;
  Latency& l = s.latency;
  if (steps.ran) l.phase = steps.name;
  l.step = rundir::spread_of(describe(steps.step_ms));
  l.wait = rundir::spread_of(describe(steps.wait_ms));
  l.compute =
      rundir::spread_of(describe(end_to_end.ran ? end_to_end.compute_ms : compute.compute_ms));
  l.h2d = rundir::spread_of(describe(steps.h2d_ms));
  l.sync = rundir::spread_of(describe(steps.sync_ms));
  if (pipeline.ran) l.stages_phase = "pipeline";
  l.stages = {{"read", rundir::spread_of(describe(pipeline.read_ms))},
              {"decode", rundir::spread_of(describe(pipeline.decode_ms))},
              {"augment", rundir::spread_of(describe(pipeline.augment_ms))},
              {"collate", rundir::spread_of(describe(pipeline.collate_ms))},
              {"pin", rundir::spread_of(describe(pipeline.pin_ms))}};
  s.pin_mode = outcome.pin_mode;
  if (pipeline.ran || end_to_end.ran)
    s.decode_placement = decode_placement(compute, pipeline, end_to_end, outcome.step_kind);
  // The loader's order (the pipeline phase's: no step decides it), against a global permutation.
  if (pipeline.ran) {
    const ShuffleQuality q = shuffle_quality(pipeline.delivered, pipeline.delivered_batches);
    ShuffleFigures& shuffle = s.shuffle.emplace();
    shuffle.samples = q.samples;
    if (q.measured()) {
      shuffle.gap_ratio = q.gap_ratio;
      shuffle.order_correlation = q.order_correlation;
    }
  }
  if (pipeline.ran && pipeline.media_reads > 0) {
    ReadPattern& reads = s.read_pattern.emplace();
    reads.phase = pipeline.name;
    reads.media_reads = pipeline.media_reads;
    reads.sequential_fraction =
        static_cast<double>(pipeline.continued_reads) / static_cast<double>(pipeline.media_reads);
    reads.kib_per_sample =
        static_cast<double>(pipeline.bytes) / static_cast<double>(pipeline.media_reads) / 1024.0;
  }

  // Without a sampler, DESIGN.md's memory, cpu and io keys are there with nulls, never faked
  // (a Summary's are unsampled until the sampler's figures are added).
  if (resources != nullptr) {
    // cpu and io at the top cover the pipeline phase's measured window (warm-up excluded), or
    // the whole run when the pipeline never reached its window.
    add_resource_parts(s, *resources,
                       {{compute.name, compute.samples},
                        {pipeline.name, pipeline.samples},
                        {end_to_end.name, end_to_end.samples}},
                       pipeline.name);
  }
  s.errors = {.count = outcome.error_events, .samples = outcome.error_samples};
  return s;
}

}  // namespace mmprof
