#include "mmprof/baseline.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "env/network.hpp"
#include "mmprof/error.hpp"
#include "mmprof/loader.hpp"
#include "probe/clock.hpp"
#include "probe/procfs.hpp"
#include "probe/resource_sampler.hpp"
#include "run/epoch_boundary.hpp"
#include "run/gpu_phase.hpp"
#include "run/manifest.hpp"
#include "run/phase_metrics.hpp"
#include "run/progress.hpp"
#include "run/reliability.hpp"
#include "run/resume.hpp"
#include "run/steady_state.hpp"
#include "rundir/run_files.hpp"
#include "step/step.hpp"
#include "trace/tracer.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

std::string fmt_ms(double ms) {
  return fmt::format("{:.4f}", ms);
}

// Owns the run directory's streaming files and the phase bookkeeping.
class BaselineRun {
 public:
  BaselineRun(const Config& config, const Dataset& dataset, const BaselineOptions& options)
      : config_(config),
        dataset_(dataset),
        dataset_fingerprint_(dataset.fingerprint()),
        options_(options),
        steps_csv_(options.out / "steps.csv",
                   "step,phase,t_start_ns,wait_ms,h2d_ms,compute_ms,step_ms,samples,bytes\n"),
        stages_csv_(options.out / "stages.csv",
                    "key,worker,read_ms,decode_ms,augment_ms,bytes,faults,phase,step,modality,"
                    "majflt,t_start_ns\n"),
        errors_(options.out / "errors.jsonl", ""),
        digests_csv_(options.out / "digests.csv", "phase,batch_id,epoch,digest\n"),
        resources_csv_(options.out / "resources.csv", resources_csv_header()),
        host_csv_(options.out / "host.csv", host_csv_header()),
        progress_(options.progress),
        sampler_(procfs_, clock_, {config.metrics.interval_ms, 0}, [this](const Snapshot& s) {
          resources_csv_.write(resources_csv_rows(s));
          trace::resources(s);
          host_csv_.write(host_csv_row(s));
        }) {}

  nlohmann::json run() {
    compute_.name = "compute";
    pipeline_.name = "pipeline";
    end_to_end_.name = "end_to_end";
    sampler_.start();
    try {
      gpu_.require_gpu();  // before minutes of pipeline phase, not after
      log_rejections();
      if (!checkpoint_.phase_done("pipeline")) {  // a resumed run skips a finished phase
        sampler_.set_phase("pipeline");
        Loader loader(config_, dataset_, checkpoint_.start_batch("pipeline"));
        watch_workers(loader);
        run_loader_phase(pipeline_, loader, nullptr);
        reliability_.loader_done();
      }
      if (config_.step.kind == StepKind::none) {
        facts_.step_description = "none: data pipeline only";
      } else {
        // The end-to-end loader forks its workers before the step exists, so workers never
        // inherit libtorch or a CUDA context (DESIGN.md); they stay idle until its first batch.
        sampler_.set_phase("end_to_end");
        Loader loader(config_, dataset_, checkpoint_.start_batch("end_to_end"));
        watch_workers(loader);
        step_ = make_step(config_);
        facts_.step_description = step_->describe();
        facts_.step_includes_model_compute = step_->includes_model_compute();
        sampler_.set_phase("compute");
        run_compute_phase();
        sampler_.set_phase("end_to_end");
        gpu_.start();
        run_loader_phase(end_to_end_, loader, step_.get());
        reliability_.loader_done();
        gpu_.stop();
      }
    } catch (const Error& e) {
      outcome_.status = e.code() == ExitCode::interrupted ? "interrupted" : "failed";
      outcome_.message = e.what();
      checkpoint_.write();  // exact at a graceful stop
      sampler_.set_phase("stopped");
      sampler_.stop();  // resources.csv keeps what was sampled; summary has the figures so far
      write_summary();
      progress_.finish();
      throw;
    }
    sampler_.set_phase("done");
    sampler_.stop();
    progress_.finish();
    return write_summary();
  }

  const RunFacts& facts() const { return facts_; }

 private:
  nlohmann::json write_summary() {
    outcome_.error_samples = static_cast<int64_t>(error_keys_.size());
    const ResourceUsage resources = sampler_.usage();
    auto summary = summarize(compute_, pipeline_, end_to_end_, outcome_, &resources);
    summary["reliability"] = reliability_.to_json(static_cast<int64_t>(error_keys_.size()),
                                                  static_cast<int64_t>(dataset_.rejected().size()));
    gpu_.stop();  // a failed run keeps the GPU events up to the failure
    trace::gpu_events(gpu_.trace().events);
    gpu_.write_into(summary);
    checkpoint_.write_into(summary);
    summary["epoch_boundary"] =
        epoch_boundary_.to_json(config_.loader.persistent_workers, batches_per_epoch_);
    write_json_atomic(options_.out / "summary.json", summary);
    return summary;
  }

  bool warming(int64_t step, int64_t t_phase_start) const {
    const bool by_steps = step < config_.phases.warmup_steps;
    const bool by_time =
        static_cast<double>(monotonic_ns() - t_phase_start) / 1e9 < config_.phases.warmup_s;
    return by_steps || by_time;
  }

  // The sampler names the loader's worker processes (role worker N); non-persistent workers are
  // replaced every epoch, so the pids are re-read whenever the loader says it restarted them.
  // A new loader's workers are sampled at once; replacements found inside a measured window wait
  // for the next periodic sample, so the window's timing is not disturbed.
  void watch_workers(const Loader& loader, bool sample = true) {
    sampler_.set_workers(loader.stats().worker_pids);
    worker_restarts_ = loader.stats().worker_restarts;
    if (sample) sampler_.sample_now("workers_started");
  }

  // Phase boundaries are sampled on demand (outside the timed windows): the resource window of
  // a phase is its measured window, warm-up excluded, like its throughput.
  void begin_measured_window(const std::string& phase) {
    sampler_.begin_window(phase);
    trace::mark(trace::EventName::window_begin, phase);
  }
  void end_measured_window(const std::string& phase) {
    sampler_.end_window(phase);
    trace::mark(trace::EventName::window_end, phase);
  }

  // The ceiling: the step alone on one synthetic batch held in memory.
  void run_compute_phase() {
    Batch batch;
    batch.size = static_cast<uint32_t>(config_.loader.batch_size);
    batch.n_images = batch.size;
    sampler_.sample_now("compute_start");
    trace::mark(trace::EventName::phase, "compute");
    const int64_t t_phase = monotonic_ns();
    int64_t step = 0;
    int64_t t_window = t_phase;
    for (; warming(step, t_phase); ++step)
      one_compute_step(batch, nullptr);
    begin_measured_window("compute");
    t_window = monotonic_ns();
    compute_.warmup_steps = step;
    compute_.warmup_s = static_cast<double>(t_window - t_phase) / 1e9;
    compute_.ran = true;
    for (int64_t i = 0; i < config_.phases.steps; ++i, ++step) {
      one_compute_step(batch, &compute_);
      compute_.window_s = static_cast<double>(monotonic_ns() - t_window) / 1e9;
      progress_.update("compute", i + 1, config_.phases.steps, compute_.samples_per_s());
    }
    step_->finish();
    end_measured_window("compute");
  }

  void one_compute_step(const Batch& batch, PhaseMetrics* record) {
    throw_if_interrupted();
    const int64_t t0 = monotonic_ns();
    for (int a = 0; a < config_.step.accum_steps; ++a)
      step_->run(batch);
    const int64_t t1 = monotonic_ns();
    const double ms = static_cast<double>(t1 - t0) / 1e6;
    trace::step("compute", record != nullptr ? record->steps : -1, record == nullptr, t0, t1,
                static_cast<int64_t>(batch.size) * config_.step.accum_steps);
    if (record == nullptr) return;
    record->steps++;
    record->batches += config_.step.accum_steps;
    record->samples += static_cast<int64_t>(batch.size) * config_.step.accum_steps;
    record->step_ms.push_back(ms);
    record->compute_ms.push_back(ms);
    record->wait_ms.push_back(0);
    write_step_row(*record, record->steps - 1, t0, 0, std::nan(""), ms, ms,
                   static_cast<int64_t>(batch.size) * config_.step.accum_steps, 0);
  }

  void run_loader_phase(PhaseMetrics& phase, Loader& loader, Step* step) {
    outcome_.pin_mode = facts_.pin_mode = loader.stats().pin_mode;
    sampler_.sample_now(phase.name + "_start");
    trace::mark(trace::EventName::phase, phase.name);
    batches_per_epoch_ = loader.batches_per_epoch();
    checkpoint_.set_dataset(static_cast<int64_t>(batches_per_epoch_), dataset_fingerprint_);
    first_batch_id_ = checkpoint_.start_batch(phase.name);
    const int64_t t_phase = monotonic_ns();
    int64_t s = 0;
    for (; warming(s, t_phase); ++s)
      one_loader_step(loader, step, phase, nullptr, s);
    if (config_.phases.steady_blocks > 0)
      check_steady_state(phase, [&] { one_loader_step(loader, step, phase, nullptr, s++); });
    begin_measured_window(phase.name);
    const int64_t t_window = monotonic_ns();
    phase.warmup_steps = s;
    phase.warmup_s = static_cast<double>(t_window - t_phase) / 1e9;
    phase.time_to_first_batch_ms = loader.stats().time_to_first_batch_ms;
    phase.ran = true;
    // A resumed phase runs its warm-up again, then only the measured steps still missing.
    for (int64_t i = checkpoint_.steps_done(phase.name); i < config_.phases.steps; ++i, ++s) {
      one_loader_step(loader, step, phase, &phase, i);
      phase.window_s = static_cast<double>(monotonic_ns() - t_window) / 1e9;
      progress_.update(phase.name, i + 1, config_.phases.steps, phase.samples_per_s());
    }
    if (step != nullptr) step->finish();
    end_measured_window(phase.name);
    checkpoint_.finish_phase(phase.name);
  }

  void one_loader_step(Loader& loader, Step* step, const PhaseMetrics& phase, PhaseMetrics* record,
                       int64_t index) {
    throw_if_interrupted();
    const int64_t t0 = monotonic_ns();
    double wait = 0, compute = 0;
    int64_t samples = 0;
    uint64_t bytes = 0;
    StepGpuRecord gpu;
    uint64_t last_batch_id = 0;
    for (int a = 0; a < config_.step.accum_steps; ++a) {
      const Batch& batch = next_batch(loader, phase.name);
      trace::consumed(batch.batch_id, batch.epoch);
      checkpoint_.first_batch(phase.name, batch.ready_ns, loader.stats().time_to_first_batch_ms);
      last_batch_id = batch.batch_id;
      if (record != nullptr) {
        epoch_boundary_.observe(phase.name, batch.batch_id, first_batch_id_, batches_per_epoch_,
                                batch.wait_ms);
      }
      digests_csv_.write(
          fmt::format("{},{},{},{:016x}\n", phase.name, batch.batch_id, batch.epoch, batch.digest));
      wait += batch.wait_ms;
      samples += batch.size;
      bytes += batch.bytes_read;
      if (record != nullptr) record_batch(*record, batch, index);
      if (step != nullptr) {
        const int64_t tc = monotonic_ns();
        step->run(batch);
        const int64_t tc_end = monotonic_ns();
        compute += static_cast<double>(tc_end - tc) / 1e6;
        trace::compute(phase.name, tc, tc_end);
      }
      gpu.add(batch, step != nullptr ? step->last_h2d() : std::nullopt);
    }
    const int64_t t_end = monotonic_ns();
    trace::step(phase.name, record != nullptr ? index : -1, record == nullptr, t0, t_end, samples);
    checkpoint_.step_done(phase.name, last_batch_id, record != nullptr, t_end);
    if (record == nullptr) return;
    const double step_ms = static_cast<double>(t_end - t0) / 1e6;
    if (record == &end_to_end_) gpu_.add_step({t0, t_end}, gpu);
    const double h2d = gpu.h2d_ms();
    if (!std::isnan(h2d)) record->h2d_ms.push_back(h2d);
    record->steps++;
    record->samples += samples;
    record->bytes += bytes;
    record->step_ms.push_back(step_ms);
    record->wait_ms.push_back(wait);
    if (step != nullptr) record->compute_ms.push_back(compute);
    write_step_row(*record, index, t0, wait, h2d, step != nullptr ? compute : 0, step_ms, samples,
                   bytes);
  }

  // Part of the warm-up (mmprof ab asks for it): steady.json says, per phase, whether block
  // throughput had settled.
  void check_steady_state(const PhaseMetrics& phase, const std::function<void()>& step) {
    const SteadyCriteria criteria = steady_criteria(config_);
    steady_[phase.name] = to_json(settle(criteria, step, monotonic_ns), criteria);
    write_json_atomic(options_.out / "steady.json", steady_);
  }

  // Members the dataset index refused are skipped samples like bad bytes: logged first, and under
  // on_error=fail the reason the run stops before any loader starts.
  void log_rejections() {
    for (const auto& r : dataset_.rejected()) {
      errors_.write(rejection_error_line(dataset_, r)
                        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                    "\n");
      outcome_.error_events++;
      error_keys_.insert(r.key.empty() ? r.file : r.key);
    }
    enforce_rejection_policy(config_, dataset_);
  }

  const Batch& next_batch(Loader& loader, const std::string& phase) {
    try {
      const Batch& batch = loader.next();
      reliability_.observe(loader.stats());
      if (loader.stats().worker_restarts != worker_restarts_) watch_workers(loader, false);
      for (const auto& f : batch.failures)
        log_error(f, phase, batch.batch_id, batch.epoch);
      return batch;
    } catch (const SampleError& e) {
      log_error(e.failure(), phase, e.batch_id(), e.epoch());
      throw;
    }
  }

  void record_batch(PhaseMetrics& p, const Batch& batch, int64_t step) {
    p.batches++;
    p.failures += static_cast<int64_t>(batch.failures.size());
    p.collate_ms.push_back(batch.collate_ms);
    if (outcome_.pin_mode == "pinned") p.pin_ms.push_back(batch.pin_ms);
    std::string rows;
    for (const auto& s : batch.samples) {
      p.read_ms.push_back(s.read_ms);
      p.decode_ms.push_back(s.decode_ms);
      p.augment_ms.push_back(s.augment_ms);
      p.minflt += s.minflt;
      p.majflt += s.majflt;
      rows += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n",
                          csv_field(dataset_.samples()[s.index].key), s.worker, fmt_ms(s.read_ms),
                          fmt_ms(s.decode_ms), fmt_ms(s.augment_ms), s.bytes, s.minflt, p.name,
                          step, modality_name(s.modality), s.majflt, s.t_start_ns);
    }
    stages_csv_.write(rows);
  }

  // h2d is NaN (an empty h2d_ms field) when the step made no host-to-device copy.
  void write_step_row(const PhaseMetrics& p, int64_t step, int64_t t0, double wait, double h2d,
                      double compute, double step_ms, int64_t samples, uint64_t bytes) {
    steps_csv_.write(fmt::format("{},{},{},{},{},{},{},{},{}\n", step, p.name, t0, fmt_ms(wait),
                                 std::isnan(h2d) ? "" : fmt_ms(h2d), fmt_ms(compute),
                                 fmt_ms(step_ms), samples, bytes));
  }

  void log_error(const SampleFailure& f, const std::string& phase, uint64_t batch, int64_t epoch) {
    nlohmann::json line = {
        {"key", f.key},
        {"stage", f.stage},
        {"message", f.message},
        {"phase", phase},
        {"batch", batch},
        {"epoch", epoch},
        {"file",
         (dataset_.root() / dataset_.files()[dataset_.samples()[f.index].media.file]).string()}};
    errors_.write(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    outcome_.error_events++;
    error_keys_.insert(f.key);
  }

  const Config& config_;
  const Dataset& dataset_;
  const uint64_t dataset_fingerprint_;  // once per run: it digests every sample's index entry
  const BaselineOptions& options_;
  AppendFile steps_csv_, stages_csv_, errors_, digests_csv_, resources_csv_, host_csv_;
  ProgressLine progress_;
  procfs::ProcFs procfs_;
  MonotonicClock clock_;
  int worker_restarts_ = 0;
  // Declared after the files, procfs and clock it uses: destroyed (its thread joined) first.
  ResourceSampler sampler_;
  std::unique_ptr<Step> step_;
  GpuPhase gpu_{config_.step};
  PhaseMetrics compute_, pipeline_, end_to_end_;
  RunOutcome outcome_;
  RunFacts facts_;
  std::set<std::string> error_keys_;
  ReliabilityTally reliability_;
  CheckpointKeeper checkpoint_{options_.out, options_.resume.get()};
  EpochBoundaryTally epoch_boundary_;
  size_t batches_per_epoch_ = 0;
  uint64_t first_batch_id_ = 0;  // of the current loader phase
  nlohmann::json steady_ = nlohmann::json::object();
};

}  // namespace

nlohmann::json run_baseline(const Config& config, const Dataset& dataset,
                            const BaselineOptions& options) {
  prepare_run_dir(options.out);
  const auto write_manifest = [&](const RunFacts& facts) {
    write_json_atomic(options.out / "manifest.json",
                      build_manifest(config, dataset, options, facts));
  };
  // The manifest goes first, so even a run that dies at once says what it was; it is rewritten
  // at the end with what was learned while running (pin mode, what the step is).
  RunFacts start;
  start.network_at_start = env::network_counters();
  write_manifest(start);
  BaselineRun run(config, dataset, options);
  const auto write_final_manifest = [&] {
    RunFacts facts = run.facts();
    facts.network_at_start = start.network_at_start;
    facts.end_of_run = true;
    write_manifest(facts);
  };
  nlohmann::json summary;
  try {
    summary = run.run();
  } catch (...) {
    write_final_manifest();
    throw;
  }
  write_final_manifest();
  return summary;
}

}  // namespace mmprof
