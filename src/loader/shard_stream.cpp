#include "loader/shard_stream.hpp"

#include "probe/clock.hpp"

namespace mmprof {

ShardStream::ShardStream(const Config& config, const Dataset& dataset, int worker)
    : config_(config), dataset_(dataset), worker_(worker), shards_(shard_members(dataset)) {}

bool ShardStream::reads_media(const SampleEntry& e) const {
  const bool video = e.modality == Modality::video;
  const auto limit =
      static_cast<uint64_t>(video ? config_.video.max_bytes : config_.image.max_bytes);
  return e.media.size > 0 && e.media.size <= limit;
}

bool ShardStream::reads_caption(const SampleEntry& e) const {
  return e.has_caption && e.caption.size > 0 &&
         e.caption.size <= static_cast<uint64_t>(config_.text.max_bytes);
}

void ShardStream::advance(int64_t epoch, uint32_t until, RangeReader& reader) {
  if (epoch != epoch_) {
    const EpochPlan plan(static_cast<uint32_t>(dataset_.size()), epoch,
                         sampler_options(config_, &shards_));
    stream_ = plan.stream(worker_);
    for (auto& [index, sample] : held_)
      spare_.push_back(std::move(sample));
    held_.clear();
    cursor_ = 0;
    epoch_ = epoch;
  }
  const size_t end = std::min<size_t>(until, stream_.size());
  if (cursor_ >= end) return;
  // A remote dataset's requests for the whole read-ahead go out at once.
  std::vector<ByteRange> upcoming;
  for (size_t k = cursor_; k < end; ++k) {
    const SampleEntry& e = dataset_.samples()[stream_[k]];
    if (reads_media(e)) upcoming.push_back(e.media);
    if (reads_caption(e)) upcoming.push_back(e.caption);
  }
  reader.begin(upcoming);
  for (; cursor_ < end; ++cursor_)
    read_one(stream_[cursor_], reader);
}

// Media and caption as they lie in the shard, but for what the worker refuses unread (media above
// image/video.max_bytes, a caption above text.max_bytes): the stream skips over those bytes.
void ShardStream::read_one(uint32_t index, RangeReader& reader) {
  HeldSample s;
  if (!spare_.empty()) {
    s = std::move(spare_.back());
    spare_.pop_back();
  }
  s.failure.reset();
  const SampleEntry& e = dataset_.samples()[index];
  const int64_t t0 = monotonic_ns();
  s.continued = false;
  try {
    if (reads_media(e)) {
      reader.read(e.media, s.media);
      s.continued = reader.continued();
    }
    if (reads_caption(e)) reader.read(e.caption, s.caption);
  } catch (const ReadFailure& f) {
    s.failure = f;
  }
  s.read_ns = monotonic_ns() - t0;
  held_[index] = std::move(s);
}

HeldSample* ShardStream::take(uint32_t index) {
  const auto it = held_.find(index);
  if (it == held_.end()) return nullptr;
  spare_.push_back(std::move(taken_));
  taken_ = std::move(it->second);
  held_.erase(it);
  return &taken_;
}

}  // namespace mmprof
