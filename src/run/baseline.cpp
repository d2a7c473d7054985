// run_baseline: the phases of one baseline in order (pipeline, then compute and end to end when
// there is a step), each through the PhaseRunner, and the run directory through the
// RunRecorder; at the end (also after a failure) summary.json from its parts.
#include "mmprof/baseline.hpp"

#include <fmt/format.h>

#include "data/data_mix.hpp"
#include "data/sampler.hpp"
#include "env/network.hpp"
#include "measure/manifest.hpp"
#include "mmprof/error.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "run/gpu_phase.hpp"
#include "run/locality.hpp"
#include "run/phase_runner.hpp"
#include "run/recorder.hpp"
#include "run/reliability.hpp"
#include "run/resume.hpp"
#include "step/dist_group.hpp"
#include "step/step.hpp"
#include "trace/tracer.hpp"

namespace mmprof {
namespace {

// Keeps what a failed run measured (its checkpoint, summary, manifest). When that write fails
// too (the full disk that stopped the run), the run's own error stays the one thrown, with this
// failure added to its sentence: `also` collects them.
template <class Write>
void keep_after_failure(std::string& also, Write write) {
  try {
    write();
  } catch (const Error& e) {
    also += std::string("; then ") + e.what();
  }
}

// Rethrows the run's error `e` with what could not be kept after it.
[[noreturn]] void rethrow_with(const Error& e, const std::string& also) {
  if (also.empty()) throw;
  throw Error(e.code(), e.what() + also);
}

class BaselineRun {
 public:
  BaselineRun(const Config& config, const Dataset& dataset, const BaselineOptions& options,
              RunRecorder& recorder, Clock& clock)
      : config_(config),
        dataset_(dataset),
        options_(options),
        recorder_(recorder),
        progress_(options.progress, [&clock] { return clock.now_ns(); }),
        checkpoint_(options.out, options.resume.get()),
        phases_(config, clock, recorder, progress_, checkpoint_, dataset.fingerprint()) {
    phases_.on_window_begin([this](const std::string& phase) { locality_.window_begins(phase); });
    phases_.use_group(options.group);
  }

  Summary run() {
    compute_.name = "compute";
    pipeline_.name = "pipeline";
    end_to_end_.name = "end_to_end";
    ResourceSampler& sampler = recorder_.sampler();
    sampler.start();
    try {
      gpu_.require_gpu();  // before minutes of pipeline phase, not after
      log_rejections();
      if (!checkpoint_.phase_done("pipeline")) {  // a resumed run skips a finished phase
        locality_.before_phase("pipeline");
        sampler.set_phase("pipeline");
        Loader loader(config_, dataset_, checkpoint_.start_batch("pipeline"));
        LoaderSource source(loader);
        phases_.watch_workers(source, true);
        phases_.loader(pipeline_, source, nullptr, nullptr);
        phases_.reliability().loader_done();
        locality_.after_phase("pipeline");
      }
      if (config_.step.kind == StepKind::none) {
        facts_.step_description = "none: data pipeline only";
      } else {
        // The end-to-end loader forks its workers before the step exists, so workers never
        // inherit libtorch or a CUDA context (DESIGN.md); they stay idle until its first batch.
        locality_.before_phase("end_to_end");
        sampler.set_phase("end_to_end");
        Loader loader(config_, dataset_, checkpoint_.start_batch("end_to_end"));
        LoaderSource source(loader);
        phases_.watch_workers(source, true);
        step_ = make_step(config_);
        facts_.step_description = step_->describe();
        facts_.step_includes_model_compute = step_->includes_model_compute();
        sampler.set_phase("compute");
        phases_.compute(compute_, *step_);
        sampler.set_phase("end_to_end");
        gpu_.start();
        phases_.loader(end_to_end_, source, step_.get(), &gpu_);
        phases_.reliability().loader_done();
        gpu_.stop();
        locality_.after_phase("end_to_end");
      }
      refuse_nothing_measured();
    } catch (const Error& e) {
      outcome_.status = e.code() == ExitCode::interrupted ? "interrupted" : "failed";
      outcome_.message = e.what();
      std::string also;
      // The run is over: its last files get the room kept for them, whichever write failed (a
      // full disk may first stop the checkpoint's periodic rewrite, which is no streamed row).
      recorder_.writer().release_reserve();
      keep_after_failure(also, [&] { checkpoint_.write(); });  // exact at a graceful stop
      sampler.set_phase("stopped");
      sampler.stop();  // resources.csv keeps what was sampled; summary has the figures so far
      keep_after_failure(also, [&] { write_summary(); });
      progress_.finish();
      rethrow_with(e, also);
    }
    sampler.set_phase("done");
    sampler.stop();
    progress_.finish();
    return write_summary();
  }

  RunFacts facts() const {
    RunFacts f = facts_;
    f.pin_mode = phases_.pin_mode().empty() ? facts_.pin_mode : phases_.pin_mode();
    return f;
  }

 private:
  // A loader phase whose measured steps delivered no sample (every one skipped as an error)
  // measured nothing: its 0 samples/s would read as a result. The run fails naming the errors,
  // with everything kept (issue 34).
  void refuse_nothing_measured() {
    for (const PhaseMetrics* p : {&pipeline_, &end_to_end_}) {
      if (!p->ran || p->samples > 0) continue;
      throw RunError(fmt::format(
          "the {} phase's {} measured batches delivered no sample ({} error events over {} "
          "samples, listed in errors.jsonl): nothing was measured",
          p->name, p->batches, recorder_.error_events(), recorder_.error_samples()));
    }
  }

  Summary write_summary() {
    outcome_.pin_mode = phases_.pin_mode();
    outcome_.step_kind = config_.step.kind;
    outcome_.error_events = recorder_.error_events();
    outcome_.error_samples = recorder_.error_samples();
    const ResourceUsage resources = recorder_.sampler().usage();
    Summary parts = summarize(compute_, pipeline_, end_to_end_, outcome_, &resources);
    parts.reliability = phases_.reliability().figures(outcome_.error_samples, dataset_);
    parts.resume = checkpoint_.resume_part();
    gpu_.stop();  // a failed run keeps the GPU events up to the failure
    trace::gpu_events(gpu_.trace().events);
    gpu_.contribute(parts);
    parts.epoch_boundary = phases_.epoch_boundary().figures(config_.loader.persistent_workers,
                                                            phases_.batches_per_epoch());
    loader_parts(parts);
    parts.locality = locality(resources);
    parts.dist = dist_part();
    if (options_.finish_trace) parts.trace = options_.finish_trace();
    recorder_.writer().summary(parts);
    return parts;
  }

  // The pipeline phase's (the stage phase's) samples by class and its workers' load.
  void loader_parts(Summary& parts) const {
    if (!pipeline_.ran) return;
    BalanceContext context;
    context.delivery = config_.loader.in_order ? Delivery::in_order : Delivery::out_of_order;
    context.batches_per_epoch = static_cast<int64_t>(phases_.batches_per_epoch());
    context.slowest_class = pipeline_.classes.slowest_class();
    context.workers = config_.loader.num_workers;
    parts.stage_breakdown = pipeline_.classes.figures(pipeline_.name);
    const TimeWindow window{pipeline_.window_start_ns >= 0, pipeline_.window_start_ns,
                            pipeline_.window_end_ns};
    parts.workers_balance = pipeline_.workers.figures(
        window, context, [this](uint32_t i) { return dataset_.samples()[i].key; });
  }

  // This rank of a multi-rank run: who it is and the time its steps spent in dist.sync.
  std::optional<DistRank> dist_part() const {
    if (options_.group == nullptr) return std::nullopt;
    const PhaseMetrics& p = end_to_end_.ran ? end_to_end_ : pipeline_;
    double sync = 0, steps = 0;
    for (double v : p.sync_ms)
      sync += v;
    for (double v : p.step_ms)
      steps += v;
    DistRank d;
    d.rank = config_.dist.rank;
    d.world_size = config_.dist.world_size;
    d.sync = config_.dist.sync;
    d.group = options_.group->describe();
    if (p.ran) d.phase = p.name;
    if (!p.sync_ms.empty()) d.sync_ms_total = sync;
    if (!p.sync_ms.empty() && steps > 0) d.sync_fraction = sync / steps;
    d.epochs = planned_epochs();
    return d;
  }

  // This rank's samples and batches (steps) per epoch as its sampler plans them, which job.json
  // compares across the ranks: a permutation gives every epoch as many, streamed shards are dealt
  // anew each epoch, so their first kStreamEpochsPlanned are listed.
  static constexpr int64_t kStreamEpochsPlanned = 4;
  std::vector<PlannedEpoch> planned_epochs() const {
    const ShardMembers shards = config_.data.stream ? shard_members(dataset_) : ShardMembers{};
    const SamplerOptions sampler =
        sampler_options(config_, config_.data.stream ? &shards : nullptr);
    std::vector<PlannedEpoch> out;
    for (int64_t e = 0; e < (config_.data.stream ? kStreamEpochsPlanned : 1); ++e) {
      const EpochPlan plan(static_cast<uint32_t>(dataset_.size()), e, sampler);
      out.push_back({.epoch = e,
                     .samples = static_cast<int64_t>(plan.indices().size()),
                     .batches = static_cast<int64_t>(plan.num_batches())});
    }
    return out;
  }

  // The loader phases' bytes split by where they came from (locality.hpp).
  Locality locality(const ResourceUsage& resources) {
    for (const PhaseMetrics* p : {&pipeline_, &end_to_end_}) {
      if (!p->ran) continue;
      const auto window = resources.window(p->name);
      locality_.phase_bytes(
          p->name, {.loader_bytes = p->bytes,
                    .device_bytes = window ? window->io().read_bytes : std::optional<uint64_t>{},
                    .read_span_s = p->read_span_s(),
                    .retries = p->read_retries});
    }
    const auto total_kb = resources.host().mem_total_kb;
    return locality_.figures(total_kb ? std::optional<double>(static_cast<double>(*total_kb) / 1024)
                                      : std::nullopt);
  }

  // Members the dataset index refused are skipped samples like bad bytes: logged first, and under
  // on_error=fail the reason the run stops before any loader starts. Files that are neither
  // samples nor captions are listed before them.
  void log_rejections() {
    for (const auto& f : dataset_.ignored())
      recorder_.ignored_file(f);
    for (const auto& r : dataset_.rejected())
      recorder_.rejected_member(r);
    enforce_rejection_policy(config_, dataset_);
  }

  const Config& config_;
  const Dataset& dataset_;
  const BaselineOptions& options_;
  RunRecorder& recorder_;
  ProgressLine progress_;
  CheckpointKeeper checkpoint_;
  PhaseRunner phases_;
  std::unique_ptr<Step> step_;
  GpuPhase gpu_{config_.step};
  PhaseMetrics compute_, pipeline_, end_to_end_;
  DataLocality locality_{config_.data.cache, dataset_};
  RunOutcome outcome_;
  RunFacts facts_;
};

// Keys of DESIGN.md's manifest: provenance, the data, the baseline spec, the loader's pin mode,
// `--like`, and (at the end of the run) the data mix.
nlohmann::json baseline_manifest(const Config& config, const Dataset& dataset,
                                 const BaselineOptions& options, const RunFacts& facts) {
  nlohmann::json manifest =
      provenance_manifest(options.argv, options.config_tree, options.repo, &dataset, facts);
  manifest["data"] = dataset.summary();
  manifest["baseline_spec"] = baseline_spec(config, facts);
  manifest["loader"] = {{"pin_mode", facts.pin_mode}};
  if (!options.like.is_null()) manifest["like"] = options.like;
  manifest["data_mix"] = nullptr;
  if (facts.end_of_run) {
    manifest["data_mix"] = env::data_mix(dataset, env::kMixSampleLimit, config.loader.seed);
  } else {
    manifest["data_mix_reason"] =
        "probed at the end of the run, so its reads do not warm the page cache before the "
        "measured phases";
  }
  return manifest;
}

}  // namespace

Summary run_baseline(const Config& config, const Dataset& dataset, const BaselineOptions& options) {
  MonotonicClock clock;
  RunRecorder recorder(options.out, options.force, dataset, clock, config.metrics.interval_ms);
  const auto write_manifest = [&](const RunFacts& facts) {
    recorder.writer().manifest(baseline_manifest(config, dataset, options, facts));
  };
  // The manifest goes first, so even a run that dies at once says what it was; it is rewritten
  // at the end with what was learned while running (pin mode, what the step is).
  RunFacts start;
  start.network_at_start = env::network_counters();
  write_manifest(start);
  BaselineRun run(config, dataset, options, recorder, clock);
  const auto write_final_manifest = [&] {
    RunFacts facts = run.facts();
    facts.network_at_start = start.network_at_start;
    facts.end_of_run = true;
    write_manifest(facts);
  };
  Summary summary;
  try {
    summary = run.run();
  } catch (const Error& e) {
    std::string also;
    keep_after_failure(also, write_final_manifest);
    rethrow_with(e, also);
  } catch (...) {
    write_final_manifest();
    throw;
  }
  write_final_manifest();
  return summary;
}

}  // namespace mmprof
