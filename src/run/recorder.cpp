#include "run/recorder.hpp"

#include <cmath>

#include "run/reliability.hpp"
#include "trace/tracer.hpp"

namespace mmprof {

RunRecorder::RunRecorder(const std::filesystem::path& out, bool force, const Dataset& dataset,
                         Clock& clock, int sample_interval_ms)
    : dataset_(dataset),
      writer_(out, {.force = force}),
      sampler_(procfs_, clock, {sample_interval_ms, 0}, [this](const Snapshot& s) {
        writer_.resources(s);
        trace::resources(s);
      }) {}

void RunRecorder::begin_window(const std::string& phase) {
  sampler_.begin_window(phase);
  trace::mark(trace::EventName::window_begin, phase);
}

void RunRecorder::end_window(const std::string& phase) {
  sampler_.end_window(phase);
  trace::mark(trace::EventName::window_end, phase);
}

void RunRecorder::step(const std::string& phase, int64_t step, int64_t t0, double wait_ms,
                       double h2d_ms, double compute_ms, double step_ms, int64_t samples,
                       uint64_t bytes, double sync_ms) {
  StepRow row{step,
              phase,
              t0,
              wait_ms,
              std::isnan(h2d_ms) ? std::nullopt : std::optional(h2d_ms),
              compute_ms,
              step_ms,
              samples,
              bytes,
              std::isnan(sync_ms) ? std::nullopt : std::optional(sync_ms),
              std::nullopt};  // mmprof's loader: one run directory per rank
  writer_.step(row);
}

void RunRecorder::samples(const std::string& phase, const Batch& batch, int64_t step) {
  stage_rows_.resize(batch.samples.size());
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    const SampleInfo& s = batch.samples[i];
    StageRow& r = stage_rows_[i];
    r.key = dataset_.samples()[s.index].key;
    r.worker = s.worker;
    r.read_ms = s.read_ms;
    r.decode_ms = s.decode_ms;
    r.augment_ms = s.augment_ms;
    r.bytes = s.bytes;
    r.faults = s.minflt;
    r.phase = phase;
    r.step = step;
    r.modality = modality_name(s.modality);
    r.majflt = s.majflt;
    r.t_start_ns = s.t_start_ns;
    r.format = s.format;
    r.source_width_px = s.source_width > 0 ? std::optional<int>(s.source_width) : std::nullopt;
    r.source_height_px = s.source_height > 0 ? std::optional<int>(s.source_height) : std::nullopt;
    r.decoded_in = s.decoded_in_main ? "main" : "worker";
  }
  writer_.stages(stage_rows_);
}

void RunRecorder::digest(const std::string& phase, const Batch& batch) {
  writer_.digest({phase, batch.batch_id, batch.epoch, batch.digest});
}

void RunRecorder::sample_error(const SampleFailure& f, const std::string& phase, uint64_t batch,
                               int64_t epoch) {
  writer_.error(
      {{"key", f.key},
       {"stage", f.stage},
       {"message", f.message},
       {"phase", phase},
       {"batch", batch},
       {"epoch", epoch},
       {"file",
        (dataset_.root() / dataset_.files()[dataset_.samples()[f.index].media.file]).string()}});
  error_events_++;
  error_keys_.insert(f.key);
}

void RunRecorder::ignored_file(const IgnoredFile& entry) {
  writer_.error(ignored_line(dataset_, entry));
}

void RunRecorder::rejected_member(const RejectedEntry& entry) {
  writer_.error(rejection_error_line(dataset_, entry));
  error_events_++;
  error_keys_.insert(entry.key.empty() ? entry.file : entry.key);
}

}  // namespace mmprof
