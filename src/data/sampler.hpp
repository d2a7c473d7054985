#pragma once
// The sampler: which samples this rank reads in an epoch, in which order, in which batches.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mmprof {

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  int batch_size = 32;
};

// One epoch's plan for one rank. Like torch.utils.data.DistributedSampler, the permutation is
// drawn from (seed, epoch) and the same on every rank, and rank r takes positions r, r+W, r+2W...
// Unlike it, nothing is padded or dropped: every sample is read exactly once per epoch across
// ranks (so ranks may differ by one sample), and the last batch may be partial.
class EpochPlan {
 public:
  EpochPlan(uint32_t dataset_size, int64_t epoch, const SamplerOptions& options);

  int64_t epoch() const noexcept { return epoch_; }
  const std::vector<uint32_t>& indices() const noexcept { return indices_; }
  size_t num_batches() const noexcept;
  // Sample indices of batch b (a view into indices()).
  const uint32_t* batch_begin(size_t b) const noexcept;
  size_t batch_size(size_t b) const noexcept;

 private:
  int64_t epoch_;
  int batch_size_;
  std::vector<uint32_t> indices_;
};

}  // namespace mmprof
