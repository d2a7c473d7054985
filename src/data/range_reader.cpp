#include "data/range_reader.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "data/http_client.hpp"
#include "util/error.hpp"

namespace mmprof {

RangeReader::RangeReader(const Dataset& dataset, int holders)
    : dataset_(dataset), files_(OpenFiles::capacity_for(holders)) {
  if (dataset.remote()) http_ = std::make_unique<HttpClient>(dataset.remote_config());
}

RangeReader::~RangeReader() = default;

void RangeReader::stop_on_interrupt() noexcept {
  if (http_) http_->stop_on_interrupt();
}

// A range's name among a batch's transfers: its file and offset (a shard below 1 TiB).
uint64_t RangeReader::tag(const ByteRange& range) const {
  return static_cast<uint64_t>(range.file) << 40 | (range.offset & ((uint64_t{1} << 40) - 1));
}

void RangeReader::begin(const std::vector<ByteRange>& upcoming) {
  if (!http_) return;
  http_->discard();
  for (const ByteRange& r : upcoming) {
    if (r.size == 0) continue;
    http_->queue(tag(r), dataset_.url_of(r.file), r.offset, r.size);
  }
}

void RangeReader::read(const ByteRange& range, std::vector<uint8_t>& out) {
  continued_ = range.file == last_.file && range.offset >= last_.offset + last_.size &&
               range.offset - (last_.offset + last_.size) <= kContinuedGap;
  last_ = range;
  if (!http_) {
    read_local(range, out);
    return;
  }
  try {
    http_->take(tag(range), dataset_.url_of(range.file), range.offset, range.size, out);
  } catch (const HttpFailure& f) {
    throw ReadFailure{
        f.unreachable ? fmt::format("remote storage unreachable: {}", f.message) : f.message,
        f.unreachable};
  }
}

void RangeReader::read_local(const ByteRange& range, std::vector<uint8_t>& out) {
  const auto path = dataset_.root() / dataset_.files()[range.file];
  const int fd = files_.get(range.file, path);
  if (fd < 0) {
    const int err = errno;
    const std::string what = fmt::format("cannot open {}: {}", path.string(), std::strerror(err));
    const std::string limit = machine_limit(err);
    if (!limit.empty()) throw ReadFailure{fmt::format("{} ({})", what, limit), true};
    throw ReadFailure{what};
  }
  out.resize(range.size);
  uint64_t done = 0;
  while (done < range.size) {
    const ssize_t n =
        pread(fd, out.data() + done, range.size - done, static_cast<off_t>(range.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw ReadFailure{fmt::format("short read of {} at offset {}: {}",
                                    dataset_.files()[range.file], range.offset + done,
                                    n < 0 ? std::strerror(errno) : "end of file")};
    }
    done += static_cast<uint64_t>(n);
  }
}

uint32_t RangeReader::take_retries() {
  if (!http_) return 0;
  const uint64_t now = http_->counters().retries;
  const auto n = static_cast<uint32_t>(now - retries_seen_);
  retries_seen_ = now;
  return n;
}

}  // namespace mmprof
