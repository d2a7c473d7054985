#pragma once
// A rank's process group as the run sees it: the collectives a multi-rank baseline needs (the
// per-step barrier or gradient allreduce of dist.sync, and the few exchanges that keep ranks in
// step: warm-up agreement, the job directory, the config check). TorchDistGroup is c10d's, through
// the torch plugin; tests use a fake.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mmprof/config.hpp"

namespace mmprof {

// torchrun's rendezvous variables, read from the environment.
struct DistEnv {
  std::string master_addr;   // MASTER_ADDR
  int master_port = 0;       // MASTER_PORT
  int local_rank = 0;        // LOCAL_RANK, else the rank
  bool agent_store = false;  // TORCHELASTIC_USE_AGENT_STORE=True: torchrun serves the store
};

// From the environment for a run of `world_size` > 1 ranks; throws UsageError naming what is
// missing or malformed (WORLD_SIZE without MASTER_ADDR is the usual one).
DistEnv dist_env_from(const char* master_addr, const char* master_port, const char* local_rank,
                      const char* agent_store, int rank, int world_size);

class DistGroup {
 public:
  virtual ~DistGroup() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string describe() const = 0;

  // Collectives: every rank makes the same calls in the same order; a dead or hung peer makes
  // them throw RunError after dist.timeout_s.
  virtual void barrier() = 0;
  virtual void allreduce_gradient() = 0;
  // values becomes the element-wise maximum over ranks.
  virtual void allreduce_max(std::vector<int64_t>& values) = 0;
  // Every rank's `size` bytes, rank by rank (world_size x size).
  virtual std::vector<uint8_t> allgather(const void* mine, size_t size) = 0;
  virtual void broadcast(void* buffer, size_t size) = 0;

  // Built on the above.
  bool any(bool mine);                                            // true on some rank
  std::vector<std::string> gather_text(const std::string& mine);  // every rank's text, by rank
  std::string from_rank0(const std::string& mine);                // rank 0's text on every rank
};

// c10d through the torch plugin (gloo; nccl is refused as unavailable by Debian's libtorch).
// Blocks until all ranks joined or dist.timeout_s passed.
std::unique_ptr<DistGroup> make_torch_dist_group(const Config& config, const DistEnv& env);

}  // namespace mmprof
