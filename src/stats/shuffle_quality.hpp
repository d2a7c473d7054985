#pragma once
// How random a delivery order is, measured on the order itself (docs/distributed.md, "Shuffle
// quality"): what a shard layout and a shuffle buffer cost in randomness next to a global
// permutation. Pure functions.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mmprof {

struct ShuffleQuality {
  size_t samples = 0;
  size_t pairs = 0;  // neighbours in a batch the gap ratio is measured on
  // Mean |source position difference| between neighbours in a batch over its mean in a uniformly
  // random order of the same samples: 1 for a global permutation, near 0 for batches of samples
  // that lie together in the source (a stream with a small shuffle buffer). Within batches, since
  // a batch is what a step trains on (and a DataLoader's workers interleave their batches).
  double gap_ratio = 0;
  // Pearson correlation of delivery position and source position: 0 for a permutation, 1 for
  // reading in source order (a shard-order shuffle with a buffer keeps it well above 0 within
  // each shard run).
  double order_correlation = 0;

  // Whether the figures describe an order: 3 samples or more, two of them in a batch.
  bool measured() const noexcept { return samples >= 3 && pairs > 0; }
};

// `source_positions`: each delivered sample's position in the dataset's order, in delivery
// order; `batch_sizes`: how many of them each batch holds, in order (their sum is the samples'
// count). Fewer than 3 samples, no two in a batch, or all equal: zeros.
ShuffleQuality shuffle_quality(const std::vector<uint32_t>& source_positions,
                               const std::vector<uint32_t>& batch_sizes);

}  // namespace mmprof
