#include "run/gpu_phase.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpu/cuda_runtime.hpp"
#include "gpu/gpu_tracer.hpp"

namespace mmprof {

void StepGpuRecord::add(const Batch& batch, const std::optional<gpu::H2DCopy>& copy) {
  waits.push_back(
      {batch.ready_ns - static_cast<int64_t>(std::llround(batch.wait_ms * 1e6)), batch.ready_ns});
  if (copy) copies.push_back(*copy);
}

double StepGpuRecord::h2d_ms() const noexcept {
  if (copies.empty()) return std::nan("");
  double ms = 0;
  for (const gpu::H2DCopy& c : copies)
    ms += c.ms;
  return ms;
}

GpuPhase::GpuPhase(const StepConfig& step)
    : used_(step_uses_gpu(step)),
      what_(step.kind == StepKind::gemm ? "step.kind=gemm"
                                        : fmt::format("step.device={}", step.device)) {
  if (!used_) {
    not_used_ = fmt::format("not used: step.kind={} with step.device={} does not run on the GPU",
                            to_string(step.kind), step.device);
  }
}

GpuPhase::~GpuPhase() = default;

void GpuPhase::require_gpu() const {
  if (used_) gpu::require_gpu(what_);
}

void GpuPhase::start() {
  if (!used_ || started_) return;
  started_ = true;
  std::string reason;
  tracer_ = gpu::GpuTracer::start(&reason);
  if (!tracer_) trace_.unavailable = fmt::format("unavailable: {}", reason);
}

void GpuPhase::add_step(gpu::Interval step, const StepGpuRecord& record) {
  if (!started_) return;
  steps_.push_back(step);
  waits_.insert(waits_.end(), record.waits.begin(), record.waits.end());
  copies_.insert(copies_.end(), record.copies.begin(), record.copies.end());
}

void GpuPhase::stop() {
  if (!tracer_) return;
  trace_.events = tracer_->stop();
  trace_.dropped_records = tracer_->dropped();
  trace_.incomplete_records = tracer_->incomplete();
  trace_.clock_method = tracer_->clock().method;
  tracer_.reset();
}

void GpuPhase::contribute(Summary& parts) const {
  std::string why;
  if (!used_) {
    why = not_used_;
  } else if (!gpu::gpu_availability().available) {
    why = fmt::format("unavailable: {}", gpu::gpu_availability().reason);
  } else if (steps_.empty()) {
    why = "the end-to-end phase measured no step on the GPU";
  }
  if (why.empty()) parts.gpu = gpu_block(trace_, steps_, waits_, copies_);
  parts.gpu_unavailable = why;
}

}  // namespace mmprof
