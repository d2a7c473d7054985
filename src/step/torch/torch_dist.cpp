// The process group of a multi-rank run, on PyTorch's own c10d: a TCPStore rendezvous served by
// rank 0 (as under torchrun), then ProcessGroupGloo on the CPU. Part of the torch plugin, the only
// target that links libtorch; mmprof sees the C vtable of torch_plugin_abi.hpp.
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "step/torch/plugin_boundary.hpp"
#include "step/torch_plugin_abi.hpp"

namespace {

using mmprof_torch::abi_mismatch;
using mmprof_torch::guarded;
using mmprof_torch::PluginError;

// Gloo binds each rank to an address its peers can reach: $GLOO_SOCKET_IFNAME's interface when
// set (as in PyTorch), the loopback address when the master is on it (every rank on this host),
// else the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (ifname != nullptr && *ifname != '\0')
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (master_addr == "localhost" || master_addr.rfind("127.", 0) == 0)
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

class TorchDist {
 public:
  explicit TorchDist(const MmprofTorchDistParams& p) {
    if (p.world_size < 2 || p.rank < 0 || p.rank >= p.world_size || p.master_port <= 0 ||
        p.master_port > 65535 || p.master_addr == nullptr || p.timeout_s <= 0) {
      throw PluginError{MMPROF_TORCH_USAGE, "process group parameters out of range"};
    }
    const std::string backend = p.backend != nullptr ? p.backend : "";
    if (backend != "gloo") {
      throw PluginError{MMPROF_TORCH_UNAVAILABLE,
                        "dist backend " + backend +
                            " is unavailable: this libtorch's c10d has gloo only (NCCL needs a "
                            "CUDA build of libtorch)"};
    }
    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(p.timeout_s * 1000.0 + 0.5));
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(p.master_port);
    store_options.isServer = p.rank == 0 && p.serve_store != 0;
    store_options.numWorkers = static_cast<size_t>(p.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(p.master_addr, store_options);
    // A prefix of our own: a user's job sharing the master port does not see mmprof's keys.
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("mmprof", store);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(gloo_device(p.master_addr));
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, p.rank, p.world_size, options);
    world_size_ = p.world_size;
    gradient_ = torch::zeros({static_cast<int64_t>(p.allreduce_floats)}, torch::kFloat32);
    description_ = "c10d gloo over " + std::string(p.master_addr) + ":" +
                   std::to_string(p.master_port) + ", " + std::to_string(p.world_size) +
                   " ranks, torch " + TORCH_VERSION;
  }

  void barrier() { group_->barrier()->wait(); }

  void allreduce_gradient() {
    std::vector<torch::Tensor> tensors{gradient_};
    group_->allreduce(tensors)->wait();
  }

  void allreduce_max(int64_t* values, uint32_t n) {
    std::vector<torch::Tensor> tensors{
        torch::from_blob(values, {static_cast<int64_t>(n)}, torch::kInt64).clone()};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::MAX;
    group_->allreduce(tensors, options)->wait();
    std::memcpy(values, tensors[0].data_ptr(), n * sizeof(int64_t));
  }

  void allgather(const void* mine, uint64_t size, void* all) {
    const auto n = static_cast<int64_t>(size);
    std::vector<torch::Tensor> input{
        torch::from_blob(const_cast<void*>(mine), {n}, torch::kUInt8).clone()};
    std::vector<std::vector<torch::Tensor>> output(1);
    for (int r = 0; r < world_size_; ++r)
      output[0].push_back(torch::empty({n}, torch::kUInt8));
    group_->allgather(output, input)->wait();
    for (int r = 0; r < world_size_; ++r)
      std::memcpy(static_cast<uint8_t*>(all) + static_cast<size_t>(r) * size,
                  output[0][static_cast<size_t>(r)].data_ptr(), size);
  }

  void broadcast(void* buffer, uint64_t size) {
    std::vector<torch::Tensor> tensors{
        torch::from_blob(buffer, {static_cast<int64_t>(size)}, torch::kUInt8).clone()};
    group_->broadcast(tensors)->wait();
    std::memcpy(buffer, tensors[0].data_ptr(), size);
  }

  const std::string& description() const noexcept { return description_; }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  torch::Tensor gradient_;
  int world_size_ = 0;
  std::string description_;
};

TorchDist& dist(void* self) {
  return *static_cast<TorchDist*>(self);
}

constexpr const char* kFailed = "c10d collective failed";

MmprofTorchStatus barrier(void* self, char* error, size_t error_size) {
  return guarded(kFailed, error, error_size, [&] { dist(self).barrier(); });
}

MmprofTorchStatus allreduce_gradient(void* self, char* error, size_t error_size) {
  return guarded(kFailed, error, error_size, [&] { dist(self).allreduce_gradient(); });
}

MmprofTorchStatus allreduce_max(void* self, int64_t* values, uint32_t n, char* error,
                                size_t error_size) {
  return guarded(kFailed, error, error_size, [&] { dist(self).allreduce_max(values, n); });
}

MmprofTorchStatus allgather(void* self, const void* mine, uint64_t size, void* all, char* error,
                            size_t error_size) {
  return guarded(kFailed, error, error_size, [&] { dist(self).allgather(mine, size, all); });
}

MmprofTorchStatus broadcast(void* self, void* buffer, uint64_t size, char* error,
                            size_t error_size) {
  return guarded(kFailed, error, error_size, [&] { dist(self).broadcast(buffer, size); });
}

const char* describe_dist(const void* self) {
  return static_cast<const TorchDist*>(self)->description().c_str();
}

void destroy_dist(void* self) {
  try {
    delete static_cast<TorchDist*>(self);
  } catch (...) {  // a destructor at a C boundary must not throw; nothing useful to report here
  }
}

constexpr MmprofTorchDistVTable kDistVTable{MMPROF_TORCH_ABI_VERSION,
                                            barrier,
                                            allreduce_gradient,
                                            allreduce_max,
                                            allgather,
                                            broadcast,
                                            describe_dist,
                                            destroy_dist};

}  // namespace

extern "C" __attribute__((visibility("default"))) MmprofTorchStatus mmprof_torch_dist_create(
    const MmprofTorchDistParams* params, MmprofTorchDistHandle* out, char* error,
    size_t error_size) {
  if (params == nullptr || out == nullptr || params->abi_version != MMPROF_TORCH_ABI_VERSION)
    return abi_mismatch("torch process group", error, error_size);
  return guarded("c10d process group creation failed", error, error_size, [&] {
    out->self = new TorchDist(*params);
    out->vtable = &kDistVTable;
  });
}

// Checked at compile time so a signature drift between header and plugin is a build error.
[[maybe_unused]] static constexpr MmprofTorchDistCreateFn kDistFactoryCheck =
    mmprof_torch_dist_create;
