#include "run/phase_runner.hpp"

#include <cmath>

#include "gpu/nvml.hpp"
#include "measure/steady_state.hpp"
#include "mmprof/error.hpp"
#include "run/gpu_phase.hpp"
#include "step/dist_group.hpp"
#include "step/step.hpp"
#include "trace/tracer.hpp"
#include "util/interrupt.hpp"

namespace mmprof {

PhaseRunner::PhaseRunner(const Config& config, Clock& clock, RunRecorder& recorder,
                         ProgressLine& progress, CheckpointKeeper& checkpoint,
                         uint64_t dataset_fingerprint)
    : config_(config),
      clock_(clock),
      recorder_(recorder),
      progress_(progress),
      checkpoint_(checkpoint),
      dataset_fingerprint_(dataset_fingerprint) {}

bool PhaseRunner::warming(int64_t step, int64_t t_phase_start) {
  const bool mine =
      step < config_.phases.warmup_steps || elapsed_s(t_phase_start) < config_.phases.warmup_s;
  // A warm-up by steps ends at the same step on every rank; one by time must be agreed on, or
  // the ranks' collectives would stop matching.
  if (group_ != nullptr && config_.phases.warmup_s > 0) return group_->any(mine);
  return mine;
}

void PhaseRunner::start_phase() {
  if (group_ != nullptr) group_->barrier();
}

double PhaseRunner::sync_after_step(const std::string& phase) {
  if (group_ == nullptr || config_.dist.sync == "none") return std::nan("");
  const int64_t t0 = clock_.now_ns();
  if (config_.dist.sync == "barrier") {
    group_->barrier();
  } else {
    group_->allreduce_gradient();
  }
  const int64_t t1 = clock_.now_ns();
  trace::sync(phase, t0, t1);
  return static_cast<double>(t1 - t0) / 1e6;
}

void PhaseRunner::watch_workers(const BatchSource& source, bool sample) {
  recorder_.sampler().set_workers(source.stats().worker_pids);
  worker_restarts_ = source.stats().worker_restarts;
  if (sample) recorder_.sampler().sample_now("workers_started");
}

void PhaseRunner::compute(PhaseMetrics& phase, Step& step) {
  Batch batch;
  batch.size = static_cast<uint32_t>(config_.loader.batch_size);
  batch.n_images = batch.size;
  recorder_.sampler().sample_now("compute_start");
  trace::mark(trace::EventName::phase, "compute");
  start_phase();
  const int64_t t_phase = clock_.now_ns();
  int64_t s = 0;
  for (; warming(s, t_phase); ++s)
    one_compute_step(batch, step, nullptr);
  if (on_window_begin_) on_window_begin_(phase.name);
  recorder_.begin_window(phase.name);
  const int64_t t_window = clock_.now_ns();
  phase.warmup_steps = s;
  phase.warmup_s = static_cast<double>(t_window - t_phase) / 1e9;
  phase.ran = true;
  progress_.update(phase.name, 0, config_.phases.steps, 0);
  for (int64_t i = 0; i < config_.phases.steps; ++i) {
    one_compute_step(batch, step, &phase);
    progress_.update(phase.name, i + 1, config_.phases.steps, phase.samples_per_s());
  }
  step.finish();
  recorder_.end_window(phase.name);
}

void PhaseRunner::one_compute_step(const Batch& batch, Step& step, PhaseMetrics* record) {
  throw_if_interrupted();
  const int64_t t0 = clock_.now_ns();
  for (int a = 0; a < config_.step.accum_steps; ++a)
    step.run(batch);
  const double compute = static_cast<double>(clock_.now_ns() - t0) / 1e6;
  const double sync = sync_after_step("compute");
  const int64_t t1 = clock_.now_ns();
  const double ms = static_cast<double>(t1 - t0) / 1e6;
  const int64_t samples = static_cast<int64_t>(batch.size) * config_.step.accum_steps;
  trace::step("compute", record != nullptr ? record->steps : -1, record == nullptr, t0, t1,
              samples);
  if (record == nullptr) return;
  record->add_step_span(t0, t1);
  record->steps++;
  record->batches += config_.step.accum_steps;
  record->samples += samples;
  record->step_ms.push_back(ms);
  record->compute_ms.push_back(compute);
  record->wait_ms.push_back(0);
  if (!std::isnan(sync)) record->sync_ms.push_back(sync);
  recorder_.step(record->name, record->steps - 1, t0, 0, std::nan(""), compute, ms, samples, 0,
                 sync);
}

namespace {

// NVML's reading of GPU 0 (decode placed on the device), or why there is none.
constexpr int64_t kNvmlEvery = 10;

nlohmann::json nvml_reading() {
  try {
    const gpu::NvmlSnapshot s = gpu::nvml_snapshot();
    nlohmann::json reading = gpu::to_json(s.gpus.front());
    reading["source"] = "NVML (" + s.library + "), GPU 0";
    return reading;
  } catch (const UnavailableError& e) {
    return {{"reason", e.what()}};
  }
}

}  // namespace

void PhaseRunner::loader(PhaseMetrics& phase, BatchSource& source, Step* step, GpuPhase* gpu) {
  pin_mode_ = source.stats().pin_mode;
  phase.decode_placement = source.stats().decode_placement;
  recorder_.sampler().sample_now(phase.name + "_start");
  trace::mark(trace::EventName::phase, phase.name);
  start_phase();
  batches_per_epoch_ = source.batches_per_epoch();
  checkpoint_.set_dataset(static_cast<int64_t>(batches_per_epoch_), dataset_fingerprint_);
  first_batch_id_ = checkpoint_.start_batch(phase.name);
  const int64_t t_phase = clock_.now_ns();
  int64_t s = 0;
  for (; warming(s, t_phase); ++s)
    one_loader_step(source, step, phase.name, nullptr, nullptr, s);
  if (config_.phases.steady_blocks > 0) {
    check_steady_state(phase,
                       [&] { one_loader_step(source, step, phase.name, nullptr, nullptr, s++); });
  }
  if (on_window_begin_) on_window_begin_(phase.name);
  recorder_.begin_window(phase.name);
  const int64_t t_window = clock_.now_ns();
  phase.warmup_steps = s;
  phase.warmup_s = static_cast<double>(t_window - t_phase) / 1e9;
  phase.time_to_first_batch_ms = source.stats().time_to_first_batch_ms;
  phase.ran = true;
  // A resumed phase runs its warm-up again, then only the measured steps still missing.
  if (checkpoint_.steps_done(phase.name) < config_.phases.steps)
    progress_.update(phase.name, checkpoint_.steps_done(phase.name), config_.phases.steps, 0);
  for (int64_t i = checkpoint_.steps_done(phase.name); i < config_.phases.steps; ++i) {
    one_loader_step(source, step, phase.name, &phase, gpu, i);
    progress_.update(phase.name, i + 1, config_.phases.steps, phase.samples_per_s());
  }
  // Known after the warm-up, or (phases.warmup_steps=0) after the first measured batch.
  phase.time_to_first_batch_ms = source.stats().time_to_first_batch_ms;
  phase.device_decode_fallback_reason = source.stats().decode_fallback_reason;
  if (step != nullptr) step->finish();
  recorder_.end_window(phase.name);
  checkpoint_.finish_phase(phase.name);
}

void PhaseRunner::one_loader_step(BatchSource& source, Step* step, const std::string& phase,
                                  PhaseMetrics* record, GpuPhase* gpu, int64_t index) {
  throw_if_interrupted();
  const int64_t t0 = clock_.now_ns();
  double wait = 0, compute = 0;
  int64_t samples = 0;
  uint64_t bytes = 0, retries = 0;
  StepGpuRecord gpu_record;
  uint64_t last_batch_id = 0;
  for (int a = 0; a < config_.step.accum_steps; ++a) {
    const Batch& batch = next_batch(source, phase);
    trace::consumed(batch.batch_id, batch.epoch);
    checkpoint_.first_batch(phase, batch.ready_ns, source.stats().time_to_first_batch_ms);
    last_batch_id = batch.batch_id;
    epoch_boundary_.observe(phase, batch, first_batch_id_, record != nullptr);
    recorder_.digest(phase, batch);
    wait += batch.wait_ms;
    samples += batch.size;
    bytes += batch.bytes_read;
    retries += batch.read_retries;
    if (record != nullptr) {
      record->add_batch(batch, pin_mode_ == "pinned");
      recorder_.samples(phase, batch, index);
      // Decode placed on the GPU: NVML's utilisation (each over its own last sample period,
      // about 1/6 s) every kNvmlEvery measured steps, averaged in the summary.
      if (a == 0 && index % kNvmlEvery == 0 &&
          (decodes_on_device(config_, Modality::image) ||
           decodes_on_device(config_, Modality::video))) {
        record->nvml_readings.push_back(nvml_reading());
      }
    }
    if (step != nullptr) {
      const int64_t tc = clock_.now_ns();
      step->run(batch);
      const int64_t tc_end = clock_.now_ns();
      compute += static_cast<double>(tc_end - tc) / 1e6;
      trace::compute(phase, tc, tc_end);
    }
    gpu_record.add(batch, step != nullptr ? step->last_h2d() : std::nullopt);
  }
  // The loader alone (no step) is each rank's own: nothing to synchronise.
  const double sync = step != nullptr ? sync_after_step(phase) : std::nan("");
  const int64_t t_end = clock_.now_ns();
  trace::step(phase, record != nullptr ? index : -1, record == nullptr, t0, t_end, samples);
  checkpoint_.step_done(phase, last_batch_id, record != nullptr, t_end);
  if (record == nullptr) return;
  const double step_ms = static_cast<double>(t_end - t0) / 1e6;
  record->add_step_span(t0, t_end);
  if (gpu != nullptr) gpu->add_step({t0, t_end}, gpu_record);
  const double h2d = gpu_record.h2d_ms();
  if (!std::isnan(h2d)) record->h2d_ms.push_back(h2d);
  record->steps++;
  record->samples += samples;
  record->bytes += bytes;
  record->read_retries += retries;
  record->step_ms.push_back(step_ms);
  record->wait_ms.push_back(wait);
  if (step != nullptr) record->compute_ms.push_back(compute);
  if (!std::isnan(sync)) record->sync_ms.push_back(sync);
  recorder_.step(phase, index, t0, wait, h2d, step != nullptr ? compute : 0, step_ms, samples,
                 bytes, sync);
}

const Batch& PhaseRunner::next_batch(BatchSource& source, const std::string& phase) {
  try {
    const Batch& batch = source.next();
    reliability_.observe(source.stats());
    if (source.stats().worker_restarts != worker_restarts_) watch_workers(source, false);
    for (const auto& f : batch.failures)
      recorder_.sample_error(f, phase, batch.batch_id, batch.epoch);
    return batch;
  } catch (const SampleError& e) {
    recorder_.sample_error(e.failure(), phase, e.batch_id(), e.epoch());
    reliability_.observe(source.stats());
    throw;
  } catch (const Error&) {
    // The worker fault that stops the run is counted with those before it.
    reliability_.observe(source.stats());
    throw;
  }
}

// Part of the warm-up (mmprof ab asks for it): steady.json says, per phase, whether block
// throughput had settled.
void PhaseRunner::check_steady_state(const PhaseMetrics& phase, const std::function<void()>& step) {
  const SteadyCriteria criteria = steady_criteria(config_);
  steady_[phase.name] =
      to_json(settle(criteria, step, [this] { return clock_.now_ns(); }), criteria);
  recorder_.writer().steady(steady_);
}

}  // namespace mmprof
