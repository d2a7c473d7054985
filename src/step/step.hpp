#pragma once
// The consumer of batches: what a training step does with one. `none` (pipeline only), `sleep`
// and `spin` for step.ms (an emulated accelerator, as MLPerf Storage does), `gemm` (a cuBLAS loop
// of step.ms on the GPU, step/gemm_step.hpp) and `torch` (a plugin, built and loaded only when
// asked for).
#include <memory>
#include <optional>
#include <string>

#include "gpu/h2d_copy.hpp"
#include "mmprof/config.hpp"
#include "mmprof/loader.hpp"

namespace mmprof {

class Step {
 public:
  virtual ~Step() = default;
  // Runs one micro-step on the batch (blocking until it is done).
  virtual void run(const Batch& batch) = 0;
  // What a step is, for the manifest ("sleep 20 ms per micro-batch", ...).
  virtual std::string describe() const = 0;
  // True when the step's time includes model compute (not an emulation).
  virtual bool includes_model_compute() const { return false; }
  // GPU steps: the host-to-device copy the last run() made (nullopt when it made none).
  virtual std::optional<gpu::H2DCopy> last_h2d() const { return std::nullopt; }
  // Waits for work a step left in flight: a GPU step keeps one micro-batch queued on the device
  // so the next copy overlaps it. Called at the end of each phase's measured window.
  virtual void finish() {}
};

// Returns nullptr for step.kind=none. Throws UnavailableError for torch when not built with it and
// for gemm without a GPU or cuBLAS.
std::unique_ptr<Step> make_step(const Config& config);

}  // namespace mmprof
