#include "data/open_files.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace mmprof {

size_t OpenFiles::capacity_for(int holders) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return kMaxCapacity;
  std::error_code ec;
  size_t open = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++open;
  if (open > 0) --open;  // the listing's own descriptor
  const size_t headroom = lim.rlim_cur > open ? lim.rlim_cur - open : 0;
  return std::clamp<size_t>(headroom / 2 / static_cast<size_t>(std::max(holders, 1)), 1,
                            kMaxCapacity);
}

OpenFiles::OpenFiles(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  entries_.reserve(capacity_);
}

OpenFiles::~OpenFiles() {
  for (const Entry& e : entries_)
    ::close(e.fd);
}

int OpenFiles::get(uint32_t id, const std::filesystem::path& path) {
  ++uses_;
  const auto held =
      std::find_if(entries_.begin(), entries_.end(), [id](const Entry& e) { return e.id == id; });
  if (held != entries_.end()) {
    held->last_use = uses_;
    return held->fd;
  }
  if (entries_.size() == capacity_) {
    const auto oldest =
        std::min_element(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    ::close(oldest->fd);
    entries_.erase(oldest);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;  // errno from open(2)
  entries_.push_back({id, fd, uses_});
  return fd;
}

}  // namespace mmprof
