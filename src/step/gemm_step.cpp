#include "step/gemm_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpu/cublas_api.hpp"
#include "gpu/cuda_runtime.hpp"
#include "mmprof/error.hpp"

namespace mmprof {
namespace {

// 4096^3 FP16 takes ~0.2 ms on an H100/H200 and ~1-2 ms on smaller GPUs: fine-grained enough to
// hit step.ms within a few percent, large enough to run at tensor-core speed.
constexpr int kGemmSize = 4096;
constexpr int kWarmupGemms = 3;
constexpr int kTimedGemms = 20;
constexpr size_t kHalf = 2;  // bytes of an FP16 element

}  // namespace

std::vector<gpu::HostSpan> batch_spans(const Batch& batch, const BatchLayout& layout) {
  std::vector<gpu::HostSpan> spans;
  const auto add = [&](const void* data, size_t bytes) {
    if (data != nullptr && bytes > 0) spans.push_back({data, bytes});
  };
  add(batch.tokens, static_cast<size_t>(batch.size) * layout.tokens_bytes);
  add(batch.images, static_cast<size_t>(batch.n_images) * layout.image_bytes);
  add(batch.videos, static_cast<size_t>(batch.n_videos) * layout.video_bytes);
  return spans;
}

double gemm_flop(int m, int n, int k) noexcept {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

GemmPlan plan_gemms(int size, double ms_per_gemm, double step_ms) {
  if (!(ms_per_gemm > 0)) {
    throw RunError(fmt::format("GEMM calibration measured {} ms per GEMM", ms_per_gemm));
  }
  GemmPlan p;
  p.size = size;
  p.ms_per_gemm = ms_per_gemm;
  p.gemms_per_step = std::max(1, static_cast<int>(std::lround(step_ms / ms_per_gemm)));
  p.tflop_per_s = gemm_flop(size, size, size) / (ms_per_gemm / 1e3) / 1e12;
  return p;
}

struct GemmStep::Device {
  explicit Device(size_t batch_capacity)
      : copier(batch_capacity),
        blas(compute),
        weights(gpu::Memory::device, matrix_bytes()),
        act{gpu::CudaBuffer(gpu::Memory::device, matrix_bytes()),
            gpu::CudaBuffer(gpu::Memory::device, matrix_bytes())} {
    // Zeros: the values are irrelevant to the timing, and zeros cannot overflow to inf/NaN.
    weights.fill_async(0, compute);
    for (auto& a : act)
      a.fill_async(0, compute);
  }
  static size_t matrix_bytes() { return static_cast<size_t>(kGemmSize) * kGemmSize * kHalf; }

  // Enqueues `count` chained GEMMs act[i%2] * W -> act[(i+1)%2] on the compute stream.
  void chain(int count) {
    for (int i = 0; i < count; ++i) {
      blas.gemm_fp16(kGemmSize, kGemmSize, kGemmSize, act[i % 2].data(), weights.data(),
                     act[(i + 1) % 2].data());
    }
  }

  // The ingest GEMM: the first rows of the batch (read as FP16, kGemmSize columns) times W, so
  // the step's compute depends on the copied bytes. Batches smaller than a row skip it.
  void ingest(const gpu::CudaBuffer& batch, size_t batch_bytes) {
    const size_t row_bytes = static_cast<size_t>(kGemmSize) * kHalf;
    const int rows = static_cast<int>(std::min<size_t>(batch_bytes / row_bytes, kGemmSize));
    if (rows > 0)
      blas.gemm_fp16(rows, kGemmSize, kGemmSize, batch.data(), weights.data(), act[0].data());
  }

  double time_gemms() {
    chain(kWarmupGemms);
    start.record(compute);
    chain(kTimedGemms);
    end.record(compute);
    end.synchronize();
    return gpu::CudaEvent::elapsed_ms(start, end) / kTimedGemms;
  }

  gpu::CudaStream compute;
  gpu::H2DCopier copier;
  gpu::Cublas blas;
  gpu::CudaBuffer weights;
  gpu::CudaBuffer act[2];
  gpu::CudaEvent start, end;
  gpu::CudaEvent done[2];  // the end of each in-flight micro-batch's GEMMs
  int64_t runs = 0;
};

GemmStep::GemmStep(const Config& config) {
  gpu::require_gpu("step.kind=gemm");
  layout_ = batch_layout(config);
  device_ = std::make_unique<Device>(layout_.max_bytes());
  plan_ = plan_gemms(kGemmSize, device_->time_gemms(), config.step.ms);
}

GemmStep::~GemmStep() {
  try {
    if (device_) device_->compute.synchronize();
  } catch (...) {  // a destructor never throws; the context is torn down at exit anyway
  }
}

void GemmStep::run(const Batch& batch) {
  Device& d = *device_;
  const auto spans = batch_spans(batch, layout_);
  if (spans.empty()) {
    // The compute-ceiling phase's synthetic batch: no host data, the step alone.
    last_h2d_.reset();
    d.chain(plan_.gemms_per_step);
  } else {
    const gpu::CudaBuffer& on_device = d.copier.copy(spans, d.compute);
    last_h2d_ = d.copier.last();
    d.ingest(on_device, last_h2d_->bytes);
    d.copier.consumed(d.compute);
    d.chain(plan_.gemms_per_step);
  }
  d.done[d.runs % 2].record(d.compute);
  if (d.runs > 0) d.done[(d.runs - 1) % 2].synchronize();
  d.runs++;
}

void GemmStep::finish() {
  device_->compute.synchronize();
}

std::string GemmStep::describe() const {
  return fmt::format(
      "gemm: {} cuBLAS GEMMs of {}x{}x{} FP16 (FP32 accumulate) per micro-batch, planned {:.2f} "
      "ms ({:.4f} ms each, {:.1f} TFLOP/s achieved at calibration); each batch is copied to the "
      "device on its own stream and read by the first GEMM; {}",
      plan_.gemms_per_step, plan_.size, plan_.size, plan_.size, plan_.planned_step_ms(),
      plan_.ms_per_gemm, plan_.tflop_per_s, device_->blas.library());
}

}  // namespace mmprof
