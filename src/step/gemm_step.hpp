#pragma once
// step.kind=gemm: a cuBLAS GEMM loop of about step.ms per micro-batch, to emulate a training step
// (and GPU contention) without libtorch. The number of GEMMs per step is calibrated once, on the
// device, when the step is made. Each batch is copied to the device first (gpu/h2d_copy.hpp) and
// the first GEMM reads it, so compute depends on the data arriving.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/h2d_copy.hpp"
#include "step/step.hpp"

namespace mmprof {

// The calibration's outcome (pure arithmetic, tested without a GPU).
struct GemmPlan {
  int size = 0;            // m = n = k
  double ms_per_gemm = 0;  // measured with CUDA events
  int gemms_per_step = 0;  // n with n x ms_per_gemm closest to step.ms, at least 1
  double tflop_per_s = 0;  // achieved: 2 m n k / ms_per_gemm
  double planned_step_ms() const noexcept { return gemms_per_step * ms_per_gemm; }
};

// FLOPs of one m x n x k GEMM (multiply and add counted separately).
double gemm_flop(int m, int n, int k) noexcept;
// step_ms > 0 is checked by the config (resolve_config); throws RunError unless ms_per_gemm > 0.
GemmPlan plan_gemms(int size, double ms_per_gemm, double step_ms);

// The bytes of a batch that go to the device: tokens (size x seq_len int32), images
// (n_images x image_bytes) and videos (n_videos x video_bytes), skipping empty or absent parts.
std::vector<gpu::HostSpan> batch_spans(const Batch& batch, const BatchLayout& layout);

// A Step on the GPU. One micro-batch stays in flight: run() enqueues this batch's copy and GEMMs,
// then waits for the previous micro-batch's GEMMs, so the next copy overlaps this compute, as a
// PyTorch loop that syncs once per step does. finish() waits for the last one.
class GemmStep final : public Step {
 public:
  // Throws UnavailableError without a GPU or cuBLAS.
  explicit GemmStep(const Config& config);
  ~GemmStep() override;
  GemmStep(const GemmStep&) = delete;
  GemmStep& operator=(const GemmStep&) = delete;

  void run(const Batch& batch) override;
  void finish() override;
  std::optional<gpu::H2DCopy> last_h2d() const override { return last_h2d_; }
  std::string describe() const override;
  const GemmPlan& plan() const noexcept { return plan_; }

 private:
  struct Device;  // streams, buffers, cuBLAS
  std::unique_ptr<Device> device_;
  GemmPlan plan_;
  BatchLayout layout_;
  std::optional<gpu::H2DCopy> last_h2d_;
};

}  // namespace mmprof
