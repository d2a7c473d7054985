// The torch training step, built as its own shared library (libmmprof_torch_step.so) so that only
// a run that asks for step.kind=torch pays libtorch's start-up (DESIGN.md: "libtorch is
// isolated"). This is the only mmprof file that includes torch headers; it sees no mmprof types,
// only the C structs of torch_plugin_abi.hpp.
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "step/torch/plugin_boundary.hpp"
#include "step/torch_plugin_abi.hpp"

namespace {

using mmprof_torch::abi_mismatch;
using mmprof_torch::guarded;
using mmprof_torch::PluginError;

constexpr int64_t kClasses = 10;
// Plain SGD with momentum: the cheapest optimizer that still updates every parameter, so the step
// measures forward + backward + update without an optimizer dominating a small model.
constexpr double kLearningRate = 0.05;
constexpr double kMomentum = 0.9;

// conv 3->16 k3 s2, ReLU, conv 16->32 k3 s2, ReLU, global average pool, linear -> 10 classes.
// Small on purpose: a stand-in for "the model" that keeps a CPU step in the tens of
// milliseconds, so the loader, not the model, is what a run on a laptop-sized machine measures.
struct SmallCnnImpl : torch::nn::Module {
  SmallCnnImpl()
      : conv1(register_module(
            "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1)))),
        conv2(register_module(
            "conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).stride(2).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(32, kClasses))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1->forward(x));
    x = torch::relu(conv2->forward(x));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc->forward(x);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc;
};
TORCH_MODULE(SmallCnn);

torch::Device parse_device(const std::string& text) {
  std::optional<torch::Device> device;
  try {
    device.emplace(text);
  } catch (const std::exception&) {
    throw PluginError{MMPROF_TORCH_USAGE,
                      "step.device must be cpu, cuda or cuda:N, got '" + text + "'"};
  }
  if (device->is_cpu()) return *device;
  if (!device->is_cuda()) {
    throw PluginError{MMPROF_TORCH_USAGE,
                      "step.device must be cpu, cuda or cuda:N, got '" + text + "'"};
  }
  // is_available() initialises the CUDA driver but creates no context; the context (and the
  // model's memory) comes at the first run(), after the loader has forked its workers.
  if (!torch::cuda::is_available()) {
    throw PluginError{MMPROF_TORCH_UNAVAILABLE,
                      "step.device=" + text +
                          " is unavailable: libtorch " TORCH_VERSION
                          " sees no CUDA device (a CPU-only build, or no GPU on this machine)"};
  }
  const auto count = static_cast<int64_t>(torch::cuda::device_count());
  if (device->has_index() && device->index() >= count) {
    throw PluginError{MMPROF_TORCH_UNAVAILABLE, "step.device=" + text + " is unavailable: " +
                                                    std::to_string(count) + " CUDA device(s)"};
  }
  return *device;
}

class TorchStep {
 public:
  explicit TorchStep(const MmprofTorchStepParams& p)
      : params_(p),
        model_name_(p.model != nullptr ? p.model : "small_cnn"),
        device_(parse_device(p.device != nullptr ? p.device : "cpu")) {
    if (model_name_ != "small_cnn") {
      throw PluginError{MMPROF_TORCH_USAGE,
                        "step.model must be small_cnn (or null), got '" + model_name_ + "'"};
    }
    if (p.accum_steps < 1 || p.num_threads < 1 || p.image_size < 1 || p.video_size < 1 ||
        p.video_frames < 1) {
      throw PluginError{MMPROF_TORCH_USAGE, "torch step parameters out of range"};
    }
    torch::set_num_threads(p.num_threads);
    // Seeded so that two arms of an A/B experiment start from identical weights.
    torch::manual_seed(p.seed);
    model_ = SmallCnn();
    description_ = describe_text();
  }

  MmprofTorchRunResult run(const MmprofTorchBatch& batch) {
    // Intra-op thread counts are per calling thread under OpenMP; re-apply ours in case run() is
    // called from another thread than the one that created the step.
    at::init_num_threads();
    if (!optimizer_) start_on_device();
    MmprofTorchRunResult result{std::numeric_limits<double>::quiet_NaN(), 0};
    const int64_t n = static_cast<int64_t>(batch.n_images) + batch.n_videos;
    if (n == 0) return result;  // every sample failed: nothing to learn from, nothing to time

    torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device_));
    if (batch.n_images > 0) {
      loss_sum =
          loss_sum + summed_loss(image_input(batch), labels(batch.image_labels, batch.n_images));
    }
    if (batch.n_videos > 0) {
      loss_sum =
          loss_sum + summed_loss(video_input(batch), labels(batch.video_labels, batch.n_videos));
    }
    const torch::Tensor loss = loss_sum / static_cast<double>(n);
    // Scaled like a gradient-accumulation loop in PyTorch, so accum_steps micro-batches add up
    // to the gradient of their mean.
    (loss / static_cast<double>(params_.accum_steps)).backward();
    if (++micro_steps_ % params_.accum_steps == 0) {
      optimizer_->step();
      optimizer_->zero_grad();
      result.stepped = 1;
    }
    // item() waits for the device, which is what makes run() blocking on CUDA.
    result.loss = loss.item<double>();
    return result;
  }

  const std::string& description() const { return description_; }

 private:
  std::string describe_text() const {
    return "torch " + model_name_ +
           " (conv3x3/2 3->16, conv3x3/2 16->32, avgpool, linear->10): forward, cross-entropy "
           "backward and SGD (lr 0.05, momentum 0.9) every " +
           std::to_string(params_.accum_steps) + " micro-batch(es) on " + device_.str() + ", " +
           std::to_string(params_.num_threads) +
           " intra-op thread(s), libtorch " TORCH_VERSION "; videos contribute their first frame";
  }

  // The model moves to the device lazily, so a CUDA context is created in the main process only
  // when the first batch arrives (DESIGN.md: workers never touch CUDA).
  void start_on_device() {
    model_->to(device_);
    model_->train();
    optimizer_ = std::make_unique<torch::optim::SGD>(
        model_->parameters(), torch::optim::SGDOptions(kLearningRate).momentum(kMomentum));
  }

  torch::Tensor summed_loss(const torch::Tensor& x, const torch::Tensor& y) {
    namespace F = torch::nn::functional;
    return F::cross_entropy(model_->forward(x), y,
                            F::CrossEntropyFuncOptions().reduction(torch::kSum));
  }

  torch::ScalarType dtype() const {
    return params_.dtype == MMPROF_TORCH_UINT8 ? torch::kUInt8 : torch::kFloat32;
  }

  // Wraps the loader's images without a copy (n x 3 x S x S); converts uint8 to float in [0, 1].
  torch::Tensor image_input(const MmprofTorchBatch& batch) {
    const int64_t n = batch.n_images, s = params_.image_size;
    if (batch.images == nullptr) return to_model_input(synthetic(synthetic_images_, {n, 3, s, s}));
    // The tensor is an input only (no in-place op touches it), so dropping const is safe.
    return to_model_input(torch::from_blob(const_cast<void*>(batch.images), {n, 3, s, s},
                                           torch::TensorOptions().dtype(dtype())));
  }

  // The first frame of each video, as a strided view into n x T x 3 x Sv x Sv: an image CNN has
  // no use for time, and one frame per clip keeps each sample's share of the step comparable.
  torch::Tensor video_input(const MmprofTorchBatch& batch) {
    const int64_t n = batch.n_videos, t = params_.video_frames, s = params_.video_size;
    if (batch.videos == nullptr) return to_model_input(synthetic(synthetic_videos_, {n, 3, s, s}));
    return to_model_input(torch::from_blob(const_cast<void*>(batch.videos), {n, 3, s, s},
                                           {t * 3 * s * s, s * s, s, 1},
                                           torch::TensorOptions().dtype(dtype())));
  }

  // non_blocking: from the loader's pinned buffer the copy is asynchronous on the current stream
  // (from pageable memory it is synchronous either way). The host buffer stays valid because
  // run() returns only after the loss is read back, which waits for the copy.
  torch::Tensor to_model_input(const torch::Tensor& x) const {
    torch::Tensor on_device = x.to(device_, /*non_blocking=*/true);
    if (on_device.scalar_type() == torch::kUInt8) return on_device.to(torch::kFloat32).div_(255.0);
    return on_device;
  }

  // Synthetic inputs for the compute-ceiling phase: made once on the device (that phase measures
  // the step alone, without host-to-device copies), in the loader's dtype so the conversion cost
  // is the same as on real batches.
  torch::Tensor synthetic(torch::Tensor& cache, at::IntArrayRef shape) {
    if (cache.defined() && cache.sizes() == shape) return cache;
    torch::Tensor x = torch::rand(shape, torch::TensorOptions().device(device_));
    cache = dtype() == torch::kUInt8 ? x.mul(255.0).to(torch::kUInt8) : x;
    return cache;
  }

  // Class ids from the host (sample index % 10, fixed per sample, so a model can fit them).
  torch::Tensor labels(const int64_t* ids, uint32_t n) const {
    if (ids == nullptr)
      return torch::arange(static_cast<int64_t>(n)).remainder(kClasses).to(device_);
    return torch::from_blob(const_cast<int64_t*>(ids), {static_cast<int64_t>(n)}, torch::kInt64)
        .to(device_);
  }

  MmprofTorchStepParams params_;
  std::string model_name_;
  torch::Device device_;
  SmallCnn model_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  torch::Tensor synthetic_images_, synthetic_videos_;
  int64_t micro_steps_ = 0;
  std::string description_;
};

MmprofTorchStatus run_step(void* self, const MmprofTorchBatch* batch, MmprofTorchRunResult* result,
                           char* error, size_t error_size) {
  return guarded("torch step failed", error, error_size,
                 [&] { *result = static_cast<TorchStep*>(self)->run(*batch); });
}

const char* describe_step(const void* self) {
  return static_cast<const TorchStep*>(self)->description().c_str();
}

void destroy_step(void* self) {
  try {
    delete static_cast<TorchStep*>(self);
  } catch (...) {  // a destructor at a C boundary must not throw; nothing useful to report here
  }
}

constexpr MmprofTorchStepVTable kStepVTable{MMPROF_TORCH_ABI_VERSION, run_step, describe_step,
                                            destroy_step};

}  // namespace

extern "C" __attribute__((visibility("default"))) MmprofTorchStatus mmprof_torch_step_create(
    const MmprofTorchStepParams* params, MmprofTorchStepHandle* out, char* error,
    size_t error_size) {
  if (params == nullptr || out == nullptr || params->abi_version != MMPROF_TORCH_ABI_VERSION) {
    return abi_mismatch("torch step", error, error_size);
  }
  return guarded("torch step creation failed", error, error_size, [&] {
    out->self = new TorchStep(*params);
    out->vtable = &kStepVTable;
  });
}

// Checked at compile time so a signature drift between header and plugin is a build error.
[[maybe_unused]] static constexpr MmprofTorchStepCreateFn kStepFactoryCheck =
    mmprof_torch_step_create;
