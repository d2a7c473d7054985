#pragma once
// A worker's reading of streamed tar shards (data.layout=tar_stream, data/sampler.hpp): its
// shards front to back, each sample's bytes held from when the stream reaches it until its batch
// takes it out of the shuffle buffer. The buffers of taken samples are kept for the next ones
// (page faults cost about 15 us per 4 KB page on these machines).
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/range_reader.hpp"
#include "data/sampler.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

// A sample's bytes as the stream read them.
struct HeldSample {
  std::vector<uint8_t> media, caption;
  int64_t read_ns = 0;     // reading its media and caption
  bool continued = false;  // its media read continued the stream's previous read
  std::optional<ReadFailure> failure;
};

class ShardStream {
 public:
  ShardStream(const Config& config, const Dataset& dataset, int worker);

  // Reads this worker's stream of `epoch` until `until` samples of it are read (a new epoch
  // starts its stream again and drops what the last one held).
  void advance(int64_t epoch, uint32_t until, RangeReader& reader);
  // Sample `index`'s bytes: they leave the buffer (valid until the next take(); swap its vectors
  // with yours to keep them). Null when the stream never held it (a plan this worker did not
  // make).
  HeldSample* take(uint32_t index);

 private:
  void read_one(uint32_t index, RangeReader& reader);
  bool reads_media(const SampleEntry& e) const;
  bool reads_caption(const SampleEntry& e) const;

  const Config& config_;
  const Dataset& dataset_;
  int worker_;
  ShardMembers shards_;
  int64_t epoch_ = -1;
  std::vector<uint32_t> stream_;
  size_t cursor_ = 0;
  std::unordered_map<uint32_t, HeldSample> held_;
  HeldSample taken_;
  std::vector<HeldSample> spare_;
};

}  // namespace mmprof
