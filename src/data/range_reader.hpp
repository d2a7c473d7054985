#pragma once
// A dataset's bytes for whoever reads samples (a loader worker, the data-mix probe, mmprof shard):
// pread from its local files, at most a bounded number open at a time (data/open_files.hpp), or
// HTTP range requests against a remote dataset (data/http_client.hpp), where the ranges a batch
// will need can be announced first so that data.remote.concurrency of them are in flight while
// earlier samples decode.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/open_files.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

class HttpClient;

// Why a range could not be read. `machine`: the machine or the network failed, not the sample
// (the open-files limit, a server that stopped answering): every later read would fail too.
struct ReadFailure {
  std::string message;
  bool machine = false;
};

class RangeReader {
 public:
  // `holders`: readers of this process sharing its open-files limit (thread workers). A remote
  // dataset's requests follow its remote_config().
  explicit RangeReader(const Dataset& dataset, int holders = 1);
  ~RangeReader();
  RangeReader(const RangeReader&) = delete;
  RangeReader& operator=(const RangeReader&) = delete;

  // The ranges the next reads will ask for, in order (remote: requests start now; local: a
  // no-op). Announced ranges not read by the next begin() are dropped.
  void begin(const std::vector<ByteRange>& upcoming);
  // Exactly `range.size` bytes into `out` (resized); throws ReadFailure naming the file.
  void read(const ByteRange& range, std::vector<uint8_t>& out);
  // A remote range being read stops at Ctrl-C (HttpClient::stop_on_interrupt): for readers in a
  // main process's own loop, never in a worker. A local read takes no longer than its pread.
  void stop_on_interrupt() noexcept;
  // Requests retried since the last call (0 for local files).
  uint32_t take_retries();
  // Whether the last read continued the one before it: the same file, starting at most
  // kContinuedGap bytes after its end (a tar member's header and padding), as streaming does.
  bool continued() const noexcept { return continued_; }
  static constexpr uint64_t kContinuedGap = 4096;

 private:
  uint64_t tag(const ByteRange& range) const;
  void read_local(const ByteRange& range, std::vector<uint8_t>& out);

  const Dataset& dataset_;
  OpenFiles files_;
  std::unique_ptr<HttpClient> http_;  // a remote dataset's
  uint64_t retries_seen_ = 0;
  ByteRange last_{UINT32_MAX, 0, 0};
  bool continued_ = false;
};

}  // namespace mmprof
