#pragma once
// Deterministic randomness. Every random decision in mmprof derives from (seed, stream, index)
// through SplitMix64, so a sample's augmentation does not depend on which worker handles it or in
// which order: A/B arms and worker counts see identical inputs.
#include <cstdint>

namespace mmprof {

constexpr uint64_t splitmix64(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256** (Blackman & Vigna, 2018), seeded through SplitMix64 as its authors recommend.
class Rng {
 public:
  explicit Rng(uint64_t seed) noexcept {
    for (auto& s : s_)
      s = seed = splitmix64(seed);
  }
  // A generator for one (seed, stream, index) triple: independent streams without shared state.
  static Rng for_item(uint64_t seed, uint64_t stream, uint64_t index) noexcept {
    return Rng(splitmix64(splitmix64(seed ^ 0x6d6d70726f66ULL) + stream) ^ splitmix64(index));
  }

  uint64_t next() noexcept {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [lo, hi] (inclusive); the modulo bias is below 2^-32 for ranges we use.
  int64_t range(int64_t lo, int64_t hi) noexcept {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Stream ids, so that two uses of one seed never share random numbers.
enum RngStream : uint64_t {
  kStreamShuffle = 1,
  kStreamAugment = 2,
  kStreamVideoWindow = 3,
  kStreamGenerate = 4,
  kStreamSynthBatch = 5,
  kStreamShardOrder = 6,     // data.layout=tar_stream: the shards' order in an epoch
  kStreamShuffleBuffer = 7,  // data.layout=tar_stream: a worker's shuffle buffer
  kStreamAbOrder = 16,       // mmprof ab: the order of the arms in each round
};

}  // namespace mmprof
