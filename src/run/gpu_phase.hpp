#pragma once
// The GPU side of a baseline's end-to-end phase (issue 4): CUPTI tracing over the phase, the
// measured steps' windows and the consumer's waits inside them, and the batches' host-to-device
// copies timed with CUDA events; at the end, summary.json's `gpu` block (measure/gpu_block).
//
// For the trace writer (mmprof trace): after stop(), GpuPhase::trace().events holds every GPU
// activity of the phase (kernels, memcpy with copy kind and pinned flag, memset, synchronisation)
// as GpuEvents on CLOCK_MONOTONIC, and steps()/waits() the host windows they were attributed to.
// The H2D copies and the compute are the memcpy (copy == h2d) and kernel events there.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/gpu_block.hpp"
#include "mmprof/loader.hpp"
#include "mmprof/summary.hpp"

namespace mmprof {

namespace gpu {
class GpuTracer;
}

// What one step's micro-batches contribute to the GPU figures.
struct StepGpuRecord {
  std::vector<gpu::Interval> waits;
  std::vector<gpu::H2DCopy> copies;
  // The consumer's wait for `batch` ([ready_ns - wait_ms, ready_ns]) and the copy a GPU step made
  // of it (nullopt when none).
  void add(const Batch& batch, const std::optional<gpu::H2DCopy>& copy);
  // Summed copy time in ms; NaN without copies.
  double h2d_ms() const noexcept;
};

// Collects the end-to-end phase's GPU figures for BaselineRun.
class GpuPhase {
 public:
  explicit GpuPhase(const StepConfig& step);
  ~GpuPhase();
  GpuPhase(const GpuPhase&) = delete;
  GpuPhase& operator=(const GpuPhase&) = delete;

  // Throws UnavailableError ("<step> is unavailable: <reason>") when the step uses the GPU and
  // none is usable. Asks the CUDA runtime only (no context), as the loader's pin setup does.
  void require_gpu() const;
  // Starts CUPTI tracing when the step uses the GPU. Called after the step exists, so the CUDA
  // context is made in the main process after the workers were forked (DESIGN.md).
  void start();
  // One measured step: its window, the consumer's waits inside it, the batches' H2D copies.
  // Ignored unless start() was called.
  void add_step(gpu::Interval step, const StepGpuRecord& record);
  // Stops tracing and keeps the events; idempotent.
  void stop();
  // The summary's gpu part (the block, or null) and gpu_unavailable (why it is null, or null).
  void contribute(Summary& parts) const;

  const GpuTraceResult& trace() const noexcept { return trace_; }
  const std::vector<gpu::Interval>& steps() const noexcept { return steps_; }
  const std::vector<gpu::Interval>& waits() const noexcept { return waits_; }

 private:
  bool used_;
  std::string what_;      // "step.kind=gemm" or "step.device=cuda", for messages
  std::string not_used_;  // why the run has no GPU block when !used_
  bool started_ = false;
  std::unique_ptr<gpu::GpuTracer> tracer_;
  GpuTraceResult trace_;
  std::vector<gpu::Interval> steps_, waits_;
  std::vector<gpu::H2DCopy> copies_;
};

}  // namespace mmprof
