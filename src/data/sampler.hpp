#pragma once
// The sampler: which samples this rank reads in an epoch, in which order, in which batches, and
// (streamed tar shards) which worker reads them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mmprof {

class Dataset;
struct Config;

// A tar dataset's samples by shard, each shard's in the order they lie in it (by offset).
using ShardMembers = std::vector<std::vector<uint32_t>>;
ShardMembers shard_members(const Dataset& dataset);

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  int batch_size = 32;
  // Streamed shards (data.layout=tar_stream): the shards, the loader's workers (0: the main
  // process reads, as one worker) and the shuffle buffer. Null: a permutation of the samples.
  const ShardMembers* shards = nullptr;
  int workers = 0;
  int shuffle_buffer = 1;
};

// The loader's sampler for `config` (`shards`: shard_members() of a data.layout=tar_stream
// dataset, else null); the loader and each worker make the same plans from it.
SamplerOptions sampler_options(const Config& config, const ShardMembers* shards);

// One epoch's plan for one rank.
//
// Without shards, like torch.utils.data.DistributedSampler: the permutation is drawn from (seed,
// epoch) and the same on every rank, and rank r takes positions r, r+W, r+2W... Unlike it,
// nothing is padded or dropped: every sample is read exactly once per epoch across ranks (so
// ranks may differ by one sample), and the last batch may be partial. Batch b goes to worker
// b mod workers (the loader's round robin).
//
// With shards, as WebDataset's pipeline under PyTorch's DataLoader: the shards' order is shuffled
// by (seed, epoch) (the same on every rank), rank r takes shards r, r+W... (split_by_node), its
// worker w of N takes the rank's shards w, w+N... (split_by_worker); the worker reads its shards
// front to back (its stream), and a buffer of shuffle_buffer samples reorders them: once full,
// each next sample read replaces a random one taken out. Each worker cuts its own batches (the
// last may be partial); the DataLoader takes them round robin over the workers that still have
// some. Every sample is read once per epoch across ranks; ranks and workers get what their
// shards hold, so uneven shards make uneven ranks.
class EpochPlan {
 public:
  EpochPlan(uint32_t dataset_size, int64_t epoch, const SamplerOptions& options);

  int64_t epoch() const noexcept { return epoch_; }
  const std::vector<uint32_t>& indices() const noexcept { return indices_; }
  size_t num_batches() const noexcept { return starts_.size(); }
  // Sample indices of batch b (a view into indices()).
  const uint32_t* batch_begin(size_t b) const noexcept { return indices_.data() + starts_[b]; }
  size_t batch_size(size_t b) const noexcept;
  bool streamed() const noexcept { return !streams_.empty(); }
  // Streamed: the worker of batch b, and how many samples of its stream it must have read
  // before batch b's samples are all out of its buffer.
  int worker(size_t b) const noexcept { return workers_[b]; }
  uint32_t read_until(size_t b) const noexcept { return read_until_[b]; }
  // Streamed: worker w's samples in the order it reads them.
  const std::vector<uint32_t>& stream(int w) const noexcept {
    return streams_[static_cast<size_t>(w)];
  }

 private:
  void permutation(uint32_t dataset_size, const SamplerOptions& options);
  void shards(const SamplerOptions& options);

  int64_t epoch_;
  std::vector<uint32_t> indices_;
  std::vector<size_t> starts_;  // batch b is indices_[starts_[b], starts_[b+1] or end)
  std::vector<int> workers_;
  std::vector<uint32_t> read_until_;
  std::vector<std::vector<uint32_t>> streams_;
};

}  // namespace mmprof
