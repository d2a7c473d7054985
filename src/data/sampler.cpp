#include "data/sampler.hpp"

#include <algorithm>
#include <numeric>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "util/rng.hpp"

namespace mmprof {

ShardMembers shard_members(const Dataset& dataset) {
  ShardMembers shards(dataset.files().size());
  const auto& samples = dataset.samples();
  for (uint32_t i = 0; i < samples.size(); ++i)
    shards[samples[i].media.file].push_back(i);
  for (auto& members : shards) {
    std::sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
      return samples[a].media.offset < samples[b].media.offset;
    });
  }
  std::erase_if(shards, [](const std::vector<uint32_t>& m) { return m.empty(); });
  return shards;
}

SamplerOptions sampler_options(const Config& c, const ShardMembers* shards) {
  SamplerOptions o;
  o.shuffle = c.loader.shuffle;
  o.seed = c.loader.seed;
  o.rank = c.dist.rank;
  o.world_size = c.dist.world_size;
  o.batch_size = c.loader.batch_size;
  o.shards = shards;
  o.workers = c.loader.num_workers;
  o.shuffle_buffer = c.data.shuffle_buffer;
  return o;
}

namespace {

// Fisher-Yates with a generator keyed by (seed, stream, item): identical on every rank and run.
template <class T>
void shuffle_with(std::vector<T>& v, Rng rng) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i - 1)))]);
}

// Every `step`th element of `v` from `first`.
template <class T>
std::vector<T> strided(const std::vector<T>& v, size_t first, size_t step) {
  std::vector<T> out;
  for (size_t p = first; p < v.size(); p += step)
    out.push_back(v[p]);
  return out;
}

struct WorkerBatches {
  std::vector<std::vector<uint32_t>> batches;
  std::vector<uint32_t> read_until;
};

// A worker's stream through its shuffle buffer, cut into batches; each batch notes how much of
// the stream had been read when its last sample left the buffer.
WorkerBatches through_buffer(const std::vector<uint32_t>& stream, size_t buffer, size_t batch,
                             Rng rng) {
  WorkerBatches out;
  std::vector<uint32_t> held;
  std::vector<uint32_t> current;
  uint32_t read = 0;
  const auto emit = [&](uint32_t sample) {
    current.push_back(sample);
    if (current.size() < batch) return;
    out.batches.push_back(std::move(current));
    out.read_until.push_back(read);
    current.clear();
  };
  const auto take = [&] {
    const auto k = static_cast<size_t>(rng.range(0, static_cast<int64_t>(held.size() - 1)));
    const uint32_t s = held[k];
    held[k] = held.back();
    held.pop_back();
    emit(s);
  };
  for (uint32_t s : stream) {
    held.push_back(s);
    ++read;
    if (held.size() >= buffer) take();
  }
  while (!held.empty())
    take();
  if (!current.empty()) {
    out.batches.push_back(std::move(current));
    out.read_until.push_back(read);
  }
  return out;
}

}  // namespace

EpochPlan::EpochPlan(uint32_t dataset_size, int64_t epoch, const SamplerOptions& options)
    : epoch_(epoch) {
  if (options.shards != nullptr) {
    shards(options);
  } else {
    permutation(dataset_size, options);
  }
}

void EpochPlan::permutation(uint32_t dataset_size, const SamplerOptions& options) {
  std::vector<uint32_t> order(dataset_size);
  std::iota(order.begin(), order.end(), 0u);
  if (options.shuffle)
    shuffle_with(order, Rng::for_item(options.seed, kStreamShuffle, static_cast<uint64_t>(epoch_)));
  indices_ =
      strided(order, static_cast<size_t>(options.rank), static_cast<size_t>(options.world_size));
  const auto b = static_cast<size_t>(options.batch_size);
  for (size_t start = 0; start < indices_.size(); start += b)
    starts_.push_back(start);
  workers_.assign(starts_.size(), -1);
  read_until_.assign(starts_.size(), 0);
}

void EpochPlan::shards(const SamplerOptions& options) {
  std::vector<uint32_t> order(options.shards->size());
  std::iota(order.begin(), order.end(), 0u);
  if (options.shuffle) {
    shuffle_with(order,
                 Rng::for_item(options.seed, kStreamShardOrder, static_cast<uint64_t>(epoch_)));
  }
  const std::vector<uint32_t> mine =
      strided(order, static_cast<size_t>(options.rank), static_cast<size_t>(options.world_size));
  const auto workers = static_cast<size_t>(std::max(1, options.workers));
  std::vector<WorkerBatches> per_worker;
  for (size_t w = 0; w < workers; ++w) {
    std::vector<uint32_t> stream;
    for (uint32_t shard : strided(mine, w, workers)) {
      const auto& members = (*options.shards)[shard];
      stream.insert(stream.end(), members.begin(), members.end());
    }
    // Keyed by epoch, rank and worker, so each stream has its own buffer's randomness.
    const uint64_t item =
        (static_cast<uint64_t>(epoch_) << 32) ^ (static_cast<uint64_t>(options.rank) << 16) ^ w;
    const size_t buffer = options.shuffle ? static_cast<size_t>(options.shuffle_buffer) : 1;
    per_worker.push_back(through_buffer(stream, buffer, static_cast<size_t>(options.batch_size),
                                        Rng::for_item(options.seed, kStreamShuffleBuffer, item)));
    streams_.push_back(std::move(stream));
  }
  // The DataLoader's round robin over the workers that still have batches.
  for (size_t k = 0;; ++k) {
    bool any = false;
    for (size_t w = 0; w < workers; ++w) {
      if (k >= per_worker[w].batches.size()) continue;
      any = true;
      starts_.push_back(indices_.size());
      const auto& batch = per_worker[w].batches[k];
      indices_.insert(indices_.end(), batch.begin(), batch.end());
      workers_.push_back(static_cast<int>(w));
      read_until_.push_back(per_worker[w].read_until[k]);
    }
    if (!any) break;
  }
}

size_t EpochPlan::batch_size(size_t b) const noexcept {
  const size_t end = b + 1 < starts_.size() ? starts_[b + 1] : indices_.size();
  return end - starts_[b];
}

}  // namespace mmprof
