#include "step/dist_group.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

#include "mmprof/error.hpp"
#include "step/torch_plugin.hpp"

namespace mmprof {
namespace {

constexpr const char* kRendezvous =
    "run it under torchrun, or let mmprof start the ranks: mmprof baseline --nproc-per-node N";

int parse_int(std::string_view name, std::string_view text, int lo, int hi) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    throw UsageError(fmt::format("{}={} must be an integer in [{}, {}]", name, text, lo, hi));
  }
  return value;
}

class TorchDistGroup final : public DistGroup {
 public:
  TorchDistGroup(const Config& config, const DistEnv& env)
      : rank_(config.dist.rank), world_size_(config.dist.world_size) {
    const std::string unavailable =
        fmt::format("dist.world_size={} is unavailable: ", config.dist.world_size);
    const LoadedTorchPlugin plugin =
        load_torch_plugin(MMPROF_TORCH_DIST_FACTORY_SYMBOL, unavailable);
    const auto create = reinterpret_cast<MmprofTorchDistCreateFn>(plugin.factory);
    const bool cuda = config.step.device.rfind("cuda", 0) == 0;
    MmprofTorchDistParams p{};
    p.abi_version = MMPROF_TORCH_ABI_VERSION;
    p.rank = rank_;
    p.world_size = world_size_;
    p.master_addr = env.master_addr.c_str();
    p.master_port = env.master_port;
    p.serve_store = env.agent_store ? 0 : 1;
    p.backend = cuda ? "nccl" : "gloo";
    p.local_rank = env.local_rank;
    p.timeout_s = config.dist.timeout_s;
    p.allreduce_floats = static_cast<uint64_t>(config.dist.allreduce_mb * 1e6 / sizeof(float));
    char error[1024] = {};
    const MmprofTorchStatus status = create(&p, &handle_, error, sizeof error);
    if (status != MMPROF_TORCH_OK) {
      throw_torch_status(status,
                         fmt::format("rank {} could not join the process group at {}:{}: {}", rank_,
                                     env.master_addr, env.master_port, error));
    }
    if (handle_.vtable == nullptr || handle_.vtable->abi_version != MMPROF_TORCH_ABI_VERSION) {
      handle_ = {};
      throw UnavailableError(unavailable + plugin.path.string() + " speaks another plugin ABI" +
                             kTorchPluginHint);
    }
  }
  ~TorchDistGroup() override {
    if (handle_.vtable != nullptr) handle_.vtable->destroy(handle_.self);
  }
  TorchDistGroup(const TorchDistGroup&) = delete;
  TorchDistGroup& operator=(const TorchDistGroup&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string describe() const override { return handle_.vtable->describe(handle_.self); }

  void barrier() override {
    call("barrier", [&](char* e, size_t n) { return handle_.vtable->barrier(handle_.self, e, n); });
  }
  void allreduce_gradient() override {
    call("allreduce",
         [&](char* e, size_t n) { return handle_.vtable->allreduce_gradient(handle_.self, e, n); });
  }
  void allreduce_max(std::vector<int64_t>& values) override {
    call("allreduce", [&](char* e, size_t n) {
      return handle_.vtable->allreduce_max(handle_.self, values.data(),
                                           static_cast<uint32_t>(values.size()), e, n);
    });
  }
  std::vector<uint8_t> allgather(const void* mine, size_t size) override {
    std::vector<uint8_t> all(size * static_cast<size_t>(world_size_));
    call("allgather", [&](char* e, size_t n) {
      return handle_.vtable->allgather(handle_.self, mine, size, all.data(), e, n);
    });
    return all;
  }
  void broadcast(void* buffer, size_t size) override {
    call("broadcast", [&](char* e, size_t n) {
      return handle_.vtable->broadcast(handle_.self, buffer, size, e, n);
    });
  }

 private:
  // A failed collective is the run's failure (a peer died or hung): RunError naming this rank.
  template <class Call>
  void call(const char* what, Call c) {
    char error[1024] = {};
    const MmprofTorchStatus status = c(error, sizeof error);
    if (status == MMPROF_TORCH_OK) return;
    throw RunError(
        fmt::format("rank {}: {} across {} ranks failed (a peer rank died, hung past "
                    "dist.timeout_s, or left early): {}",
                    rank_, what, world_size_, error));
  }

  int rank_;
  int world_size_;
  MmprofTorchDistHandle handle_{};
};

}  // namespace

DistEnv dist_env_from(const char* master_addr, const char* master_port, const char* local_rank,
                      const char* agent_store, int rank, int world_size) {
  const auto missing = [](const char* v) { return v == nullptr || *v == '\0'; };
  if (missing(master_addr) || missing(master_port)) {
    throw UsageError(fmt::format(
        "WORLD_SIZE={} asks for {} ranks, but {} (the rendezvous address torchrun sets): {}",
        world_size, world_size,
        missing(master_addr) && missing(master_port) ? "neither MASTER_ADDR nor MASTER_PORT is set"
        : missing(master_addr)                       ? "MASTER_ADDR is not set"
                                                     : "MASTER_PORT is not set",
        kRendezvous));
  }
  DistEnv env;
  env.master_addr = master_addr;
  env.master_port = parse_int("MASTER_PORT", master_port, 1, 65535);
  env.local_rank = missing(local_rank) ? rank : parse_int("LOCAL_RANK", local_rank, 0, 1 << 16);
  env.agent_store = !missing(agent_store) && std::string_view(agent_store) == "True";
  return env;
}

bool DistGroup::any(bool mine) {
  std::vector<int64_t> v{mine ? 1 : 0};
  allreduce_max(v);
  return v[0] != 0;
}

std::vector<std::string> DistGroup::gather_text(const std::string& mine) {
  std::vector<int64_t> longest{static_cast<int64_t>(mine.size())};
  allreduce_max(longest);
  // Each rank's text in a slot of the longest length, after its own length.
  const size_t slot = sizeof(uint64_t) + static_cast<size_t>(longest[0]);
  std::vector<uint8_t> buffer(slot, 0);
  const uint64_t n = mine.size();
  std::memcpy(buffer.data(), &n, sizeof n);
  std::memcpy(buffer.data() + sizeof n, mine.data(), mine.size());
  const std::vector<uint8_t> all = allgather(buffer.data(), slot);
  std::vector<std::string> texts;
  for (int r = 0; r < world_size(); ++r) {
    const uint8_t* at = all.data() + static_cast<size_t>(r) * slot;
    uint64_t len = 0;
    std::memcpy(&len, at, sizeof len);
    len = std::min<uint64_t>(len, slot - sizeof len);
    texts.emplace_back(reinterpret_cast<const char*>(at + sizeof len), len);
  }
  return texts;
}

std::string DistGroup::from_rank0(const std::string& mine) {
  uint64_t n = mine.size();
  broadcast(&n, sizeof n);
  std::string text = rank() == 0 ? mine : std::string(n, '\0');
  if (n > 0) broadcast(text.data(), n);
  return text;
}

std::unique_ptr<DistGroup> make_torch_dist_group(const Config& config, const DistEnv& env) {
  return std::make_unique<TorchDistGroup>(config, env);
}

}  // namespace mmprof
