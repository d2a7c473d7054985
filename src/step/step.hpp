#pragma once
// The consumer of batches: what a training step does with one. `none` (pipeline only), `sleep`
// and `spin` for step.ms (an emulated accelerator, as MLPerf Storage does), and `torch` (a
// plugin, built and loaded only when asked for).
#include <memory>
#include <string>

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
};

// Returns nullptr for step.kind=none. Throws UnavailableError for torch when not built with it.
std::unique_ptr<Step> make_step(const Config& config);

}  // namespace mmprof
