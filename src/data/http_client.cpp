#include "data/http_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>
#include <thread>

#include "util/interrupt.hpp"

namespace mmprof {
namespace {

constexpr uint64_t kWholeBodyTag = UINT64_MAX;
constexpr size_t kMaxWholeBody = size_t{512} << 20;  // a listing or an index, never a sample
constexpr int64_t kFirstBackoffNs = 100'000'000;
constexpr int64_t kMaxBackoffNs = 2'000'000'000;

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

CURLM* as_multi(void* p) {
  return static_cast<CURLM*>(p);
}
CURL* as_easy(void* p) {
  return static_cast<CURL*>(p);
}

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Failures worth another try: the connection, not the resource.
bool retryable_code(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

// No server there (any more): every later request would fail the same way.
bool unreachable_code(CURLcode code) {
  return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST;
}

bool retryable_status(long status) {
  return status == 408 || status == 429 || status >= 500;
}

constexpr int kMaxRedirects = 5;

bool unreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

bool is_remote(std::string_view path) {
  return path.starts_with("http://") || path.starts_with("https://");
}

std::string join_url(std::string_view base, std::string_view rel) {
  std::string url(base);
  if (!url.ends_with('/')) url += '/';
  for (const char c : rel) {
    if (unreserved(static_cast<unsigned char>(c))) {
      url += c;
    } else {
      url += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return url;
}

std::string url_origin(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t host = scheme_end + 3;
  const size_t end = std::min(url.find_first_of("/?#", host), url.size());
  std::string_view authority = url.substr(host, end - host);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  std::string out = std::string(url.substr(0, host)) + std::string(authority);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct DefaultPort {
    std::string_view scheme, port;
  };
  static constexpr DefaultPort kDefaultPorts[] = {{"http://", ":80"}, {"https://", ":443"}};
  for (const auto& [scheme, port] : kDefaultPorts) {
    if (out.starts_with(scheme) && out.ends_with(port)) out.resize(out.size() - port.size());
  }
  return out;
}

struct HttpClient::Transfer {
  enum class State { waiting, running, done, failed };
  uint64_t tag = 0;
  std::string url;
  uint64_t offset = 0, size = 0;
  bool whole = false;  // get(): the whole body, no Range
  State state = State::waiting;
  int attempt = 0;
  int redirects = 0;  // followed within the origin
  int64_t not_before_ns = 0;
  long status = 0;
  std::string refused;  // why the body was not taken (a status, a server ignoring Range)
  std::vector<uint8_t> body;
  void* easy = nullptr;
  char error[CURL_ERROR_SIZE] = {};
  HttpFailure failure;
  uint64_t* received = nullptr;

  std::string what() const {
    return whole ? fmt::format("GET {}", url)
                 : fmt::format("GET {} bytes {}-{}", url, offset, offset + size - 1);
  }

  // The body as it arrives: kept only for a successful status, and never past what was asked.
  static size_t write(char* data, size_t one, size_t n, void* self) {
    auto& t = *static_cast<Transfer*>(self);
    const size_t bytes = one * n;
    if (t.status == 0) curl_easy_getinfo(as_easy(t.easy), CURLINFO_RESPONSE_CODE, &t.status);
    if (t.status >= 300) return bytes;  // an error page: the status says it all
    if (!t.whole && t.status == 200 && t.offset != 0) {
      t.refused = "the server ignores Range requests (HTTP 200 for a byte range)";
      return 0;
    }
    const size_t limit = t.whole ? kMaxWholeBody : t.size;
    if (t.body.size() + bytes > limit) {
      t.refused = t.whole ? fmt::format("the body is larger than {} MiB", kMaxWholeBody >> 20)
                          : fmt::format("the server sent more than the {} bytes asked", t.size);
      return 0;
    }
    t.body.insert(t.body.end(), data, data + bytes);
    *t.received += bytes;
    return bytes;
  }
};

HttpClient::HttpClient(const RemoteConfig& config) : config_(config) {
  init_curl_once();
  multi_ = curl_multi_init();
  curl_multi_setopt(as_multi(multi_), CURLMOPT_MAX_HOST_CONNECTIONS,
                    static_cast<long>(config_.concurrency));
}

HttpClient::~HttpClient() {
  discard();
  for (void* e : idle_)
    curl_easy_cleanup(as_easy(e));
  curl_multi_cleanup(as_multi(multi_));
}

void HttpClient::queue(uint64_t tag, const std::string& url, uint64_t offset, uint64_t size) {
  if (transfers_.contains(tag)) return;
  auto t = std::make_unique<Transfer>();
  t->tag = tag;
  t->url = url;
  t->offset = offset;
  t->size = size;
  t->whole = tag == kWholeBodyTag;
  t->received = &counters_.bytes;
  transfers_.emplace(tag, std::move(t));
  waiting_.push_back(tag);
  start_ready();
}

void HttpClient::start_ready() {
  const int64_t now = monotonic_ns();
  // Transfers done but not taken count too: memory stays bounded when the reader is slower
  // than the network.
  for (auto it = waiting_.begin();
       it != waiting_.end() && active_ + held_ < static_cast<size_t>(config_.concurrency);) {
    Transfer& t = *transfers_.at(*it);
    if (t.not_before_ns > now) {
      ++it;
      continue;
    }
    start(t);
    it = waiting_.erase(it);
  }
}

void HttpClient::start(Transfer& t) {
  CURL* easy = nullptr;
  if (idle_.empty()) {
    easy = curl_easy_init();
  } else {
    easy = as_easy(idle_.back());
    idle_.pop_back();
    curl_easy_reset(easy);
  }
  t.easy = easy;
  t.status = 0;
  t.refused.clear();
  if (t.body.capacity() == 0 && !spare_.empty()) {
    t.body.swap(spare_.back());
    spare_.pop_back();
  }
  t.body.clear();
  if (!t.whole) t.body.reserve(t.size);
  t.error[0] = '\0';
  curl_easy_setopt(easy, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(easy, CURLOPT_PRIVATE, &t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Transfer::write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t.error);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  // Redirects are followed by finished(), only to the same server: the dataset is the one
  // data.path names, and its locality figures say where the bytes came from.
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  const auto timeout_ms = static_cast<long>(config_.timeout_s * 1000);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "mmprof");
  // Bodies arrive in blocks of this size: fewer recv(2) calls and write callbacks than the 16
  // KiB default for samples and shard chunks of hundreds of KiB.
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 256L << 10);
  const std::string range = fmt::format("{}-{}", t.offset, t.offset + t.size - 1);
  if (!t.whole) curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  curl_multi_add_handle(as_multi(multi_), easy);
  t.state = Transfer::State::running;
  ++active_;
  ++counters_.requests;
}

void HttpClient::finished(void* easy, int result) {
  Transfer* tp = nullptr;
  curl_easy_getinfo(as_easy(easy), CURLINFO_PRIVATE, reinterpret_cast<char**>(&tp));
  Transfer& t = *tp;
  curl_easy_getinfo(as_easy(easy), CURLINFO_RESPONSE_CODE, &t.status);
  curl_multi_remove_handle(as_multi(multi_), as_easy(easy));
  idle_.push_back(easy);
  t.easy = nullptr;
  --active_;
  const auto code = static_cast<CURLcode>(result);
  std::string location;
  if (code == CURLE_OK && t.status >= 300 && t.status < 400) {
    char* to = nullptr;
    curl_easy_getinfo(as_easy(easy), CURLINFO_REDIRECT_URL, &to);
    if (to != nullptr) location = to;
  }
  if (!location.empty() && url_origin(location) == url_origin(t.url) &&
      t.redirects < kMaxRedirects) {
    t.url = location;
    ++t.redirects;
    t.not_before_ns = 0;
    t.state = Transfer::State::waiting;
    waiting_.push_back(t.tag);
    return;
  }
  const bool complete = t.whole || t.body.size() == t.size;
  if (code == CURLE_OK && (t.status == 200 || t.status == 206) && complete) {
    t.state = Transfer::State::done;
    ++held_;
    return;
  }
  std::string why;
  bool retry = false;
  if (!t.refused.empty()) {
    why = t.refused;
  } else if (code != CURLE_OK) {
    why = t.error[0] != '\0' ? t.error : curl_easy_strerror(code);
    retry = retryable_code(code);
    if (code == CURLE_OPERATION_TIMEDOUT) {
      why = fmt::format("no answer within data.remote.timeout_s={} ({})", config_.timeout_s, why);
    }
  } else if (!location.empty()) {
    why = url_origin(location) != url_origin(t.url)
              ? fmt::format(
                    "HTTP {} redirects to {}, another server than {}: not followed (set "
                    "data.path to the server that holds the data)",
                    t.status, location, url_origin(t.url))
              : fmt::format("more than {} redirects", kMaxRedirects);
  } else if (t.status != 200 && t.status != 206) {
    why = fmt::format("HTTP {}", t.status);
    retry = retryable_status(t.status);
  } else {
    why = fmt::format("the response ended after {} of {} bytes", t.body.size(), t.size);
    retry = true;
  }
  if (retry && t.attempt < config_.retries) {
    ++t.attempt;
    ++counters_.retries;
    t.not_before_ns = monotonic_ns() + std::min(kFirstBackoffNs << (t.attempt - 1), kMaxBackoffNs);
    t.state = Transfer::State::waiting;
    waiting_.push_back(t.tag);
    return;
  }
  t.state = Transfer::State::failed;
  t.failure.unreachable = unreachable_code(code);
  t.failure.message = t.attempt > 0 ? fmt::format("{}: {} (after {} {})", t.what(), why, t.attempt,
                                                  t.attempt == 1 ? "retry" : "retries")
                                    : fmt::format("{}: {}", t.what(), why);
}

void HttpClient::pump() {
  int running = 0;
  curl_multi_perform(as_multi(multi_), &running);
  int left = 0;
  while (CURLMsg* m = curl_multi_info_read(as_multi(multi_), &left)) {
    if (m->msg == CURLMSG_DONE) finished(m->easy_handle, m->data.result);
  }
  start_ready();
  // Wait for the sockets, or until the earliest back-off ends; nothing to wait for when every
  // transfer has ended.
  if (active_ == 0 && waiting_.empty()) return;
  int64_t wait_ns = 50'000'000;
  const int64_t now = monotonic_ns();
  for (const uint64_t tag : waiting_)
    wait_ns = std::min(wait_ns, std::max<int64_t>(transfers_.at(tag)->not_before_ns - now, 0));
  if (active_ > 0) {
    curl_multi_poll(as_multi(multi_), nullptr, 0, static_cast<int>(wait_ns / 1'000'000), nullptr);
  } else {
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
  }
}

void HttpClient::take(uint64_t tag, const std::string& url, uint64_t offset, uint64_t size,
                      std::vector<uint8_t>& out) {
  queue(tag, url, offset, size);
  for (;;) {
    Transfer& t = *transfers_.at(tag);
    if (t.state == Transfer::State::done) {
      out.swap(t.body);
      --held_;
      // The caller's old buffer serves a later transfer: no fresh pages to fault in per sample.
      if (t.body.capacity() > 0 && spare_.size() < static_cast<size_t>(config_.concurrency)) {
        spare_.push_back(std::move(t.body));
      }
      transfers_.erase(tag);
      return;
    }
    if (t.state == Transfer::State::failed) {
      const HttpFailure failure = std::move(t.failure);
      transfers_.erase(tag);
      throw failure;
    }
    // A whole body (a listing, an index) is fetched by the main process, which Ctrl-C stops
    // within a poll (50 ms), whatever the server's pace: a slow or endless listing ends here, and
    // so does a range of a reader that asked for it.
    if ((tag == kWholeBodyTag || stop_on_interrupt_) && interrupted()) {
      discard();
      throw_if_interrupted();
    }
    if (t.state == Transfer::State::waiting && active_ == 0 && t.not_before_ns <= monotonic_ns()) {
      // Held bodies that nobody takes (a sample that failed before its caption) must not keep
      // the one asked for from starting.
      std::erase(waiting_, tag);
      start(t);
    }
    pump();
  }
}

std::string HttpClient::get(const std::string& url) {
  std::vector<uint8_t> body;
  take(kWholeBodyTag, url, 0, 0, body);
  return {body.begin(), body.end()};
}

void HttpClient::discard() {
  for (auto& [tag, t] : transfers_) {
    if (t->easy == nullptr) continue;
    curl_multi_remove_handle(as_multi(multi_), as_easy(t->easy));
    idle_.push_back(t->easy);
    --active_;
  }
  transfers_.clear();
  waiting_.clear();
  held_ = 0;
}

}  // namespace mmprof
