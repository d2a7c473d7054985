#include "data/sampler.hpp"

#include <algorithm>
#include <numeric>

#include "util/rng.hpp"

namespace mmprof {

EpochPlan::EpochPlan(uint32_t dataset_size, int64_t epoch, const SamplerOptions& options)
    : epoch_(epoch), batch_size_(options.batch_size) {
  std::vector<uint32_t> order(dataset_size);
  std::iota(order.begin(), order.end(), 0u);
  if (options.shuffle) {
    // Fisher-Yates with a generator keyed by (seed, epoch): identical on every rank and run.
    Rng rng = Rng::for_item(options.seed, kStreamShuffle, static_cast<uint64_t>(epoch));
    for (uint32_t i = dataset_size; i > 1; --i) {
      std::swap(order[i - 1], order[static_cast<uint32_t>(rng.range(0, i - 1))]);
    }
  }
  for (size_t p = static_cast<size_t>(options.rank); p < order.size();
       p += static_cast<size_t>(options.world_size)) {
    indices_.push_back(order[p]);
  }
}

size_t EpochPlan::num_batches() const noexcept {
  const auto b = static_cast<size_t>(batch_size_);
  return (indices_.size() + b - 1) / b;
}

const uint32_t* EpochPlan::batch_begin(size_t b) const noexcept {
  return indices_.data() + b * static_cast<size_t>(batch_size_);
}

size_t EpochPlan::batch_size(size_t b) const noexcept {
  const size_t start = b * static_cast<size_t>(batch_size_);
  return std::min(indices_.size() - start, static_cast<size_t>(batch_size_));
}

}  // namespace mmprof
