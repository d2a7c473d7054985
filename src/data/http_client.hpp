#pragma once
// HTTP(S) reads of a remote dataset with libcurl: whole small files (a directory listing, an
// index) and byte ranges of samples (Range requests), up to data.remote.concurrency transfers in
// flight on kept-alive connections. A transfer that fails in a way worth trying again (a 5xx, 408
// or 429 status, a refused or reset connection, a timeout, a body cut short) is retried after a
// back-off of 0.1 s doubling per try, at most data.remote.retries times; every retry is counted.
// One client per thread: a loader worker holds its own.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mmprof/config.hpp"

namespace mmprof {

// Thrown when a request failed for good. `unreachable`: no server answers at the address any
// more, after every retry (every later request would fail the same way), as opposed to a
// failure of this one resource (404, 403, a 5xx or a timeout that outlasted the retries).
struct HttpFailure {
  std::string message;
  bool unreachable = false;
};

// http:// or https://
bool is_remote(std::string_view path);

// `base` ("http://host/data/") with a relative path appended, each path segment percent-encoded.
std::string join_url(std::string_view base, std::string_view rel);

// The server a URL names, "scheme://host[:port]" in lower case, without user information and
// without the scheme's default port (http 80, https 443): a redirect is followed only when the
// new URL's origin is the same.
std::string url_origin(std::string_view url);

struct HttpCounters {
  uint64_t requests = 0;  // transfers started, retries included
  uint64_t retries = 0;
  uint64_t bytes = 0;  // body bytes received
};

class HttpClient {
 public:
  explicit HttpClient(const RemoteConfig& config);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // The whole body of `url` (status 200); throws HttpFailure.
  std::string get(const std::string& url);

  // Starts fetching bytes [offset, offset + size) of `url` (or queues it behind the transfers
  // already in flight); `tag` names it for take(). A tag queued twice is fetched once.
  void queue(uint64_t tag, const std::string& url, uint64_t offset, uint64_t size);
  // Waits for the transfer `tag` (queueing it first when it is not) and moves its bytes into
  // `out` (exactly `size` of them); throws HttpFailure. The other transfers go on meanwhile.
  void take(uint64_t tag, const std::string& url, uint64_t offset, uint64_t size,
            std::vector<uint8_t>& out);
  // Forgets every transfer not taken yet (a batch's ranges whose samples failed before them).
  void discard();
  // From now on take() of a range stops at Ctrl-C too (within a poll), throwing
  // Error(interrupted), as a whole body's always does: for a main process's own reads (the
  // data-mix probe, mmprof shard), never a worker's.
  void stop_on_interrupt() noexcept { stop_on_interrupt_ = true; }

  const HttpCounters& counters() const noexcept { return counters_; }

 private:
  struct Transfer;
  void start_ready();
  void start(Transfer& t);
  void pump();
  void finished(void* easy, int code);

  RemoteConfig config_;
  void* multi_ = nullptr;
  std::vector<void*> idle_;  // easy handles to reuse (their connections stay in the multi's pool)
  std::map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  std::vector<std::vector<uint8_t>> spare_;  // bodies to reuse
  std::deque<uint64_t> waiting_;             // queued, not started (or waiting out a back-off)
  size_t active_ = 0;
  size_t held_ = 0;  // done, not taken yet
  bool stop_on_interrupt_ = false;
  HttpCounters counters_;
};

}  // namespace mmprof
