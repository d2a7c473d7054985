#pragma once
// A reader's open dataset files (a loader worker's, the data-mix probe's), at most `capacity` at a
// time, the least recently used closed first. A files-layout dataset has one file per sample:
// holding every one open would spend the process's open-files limit (ulimit -n) on files read
// once an epoch, and a tar dataset's few shards stay open between their members.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace mmprof {

class OpenFiles {
 public:
  static constexpr size_t kMaxCapacity = 16;

  // At most kMaxCapacity, and at most half of what the open-files limit leaves this process now,
  // shared among `holders` OpenFiles of one process (thread workers); at least 1.
  static size_t capacity_for(int holders);

  explicit OpenFiles(size_t capacity);
  ~OpenFiles();
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;

  // The read-only descriptor of file `id` (at `path`), opened when it is not held; -1 with errno
  // set when open(2) fails. The descriptor stays valid until the next call.
  int get(uint32_t id, const std::filesystem::path& path);
  size_t held() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    uint32_t id;
    int fd;
    uint64_t last_use;
  };
  size_t capacity_;
  uint64_t uses_ = 0;
  std::vector<Entry> entries_;  // a handful: a linear scan beats any index
};

}  // namespace mmprof
