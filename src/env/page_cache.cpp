#include "env/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace mmprof::env {
namespace {

// An open file, closed on destruction; fd < 0 when it could not be opened.
struct OpenFile {
  int fd = -1;
  uint64_t size = 0;
  explicit OpenFile(const std::filesystem::path& path)
      : fd(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) == 0) size = static_cast<uint64_t>(st.st_size);
  }
  ~OpenFile() {
    if (fd >= 0) close(fd);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
};

void add_residency(const OpenFile& f, Residency& r) {
  if (f.fd < 0) {
    ++r.unreadable;
    return;
  }
  if (f.size == 0) return;
  const std::vector<unsigned char> pages = resident_pages(f.fd, f.size);
  if (pages.empty()) {
    ++r.unreadable;
    return;
  }
  r.pages += pages.size();
  for (const unsigned char p : pages)
    r.resident += p & 1;
}

}  // namespace

std::vector<unsigned char> resident_pages(int fd, uint64_t size) {
  if (fd < 0 || size == 0) return {};
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  void* addr = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return {};
  std::vector<unsigned char> pages((size + page - 1) / page);
  if (mincore(addr, size, pages.data()) != 0) pages.clear();
  munmap(addr, size);
  return pages;
}

Residency page_cache_residency(const std::vector<std::filesystem::path>& files) {
  Residency r;
  for (const auto& path : files)
    add_residency(OpenFile(path), r);
  return r;
}

Residency evict_from_page_cache(const std::vector<std::filesystem::path>& files) {
  Residency r;
  for (const auto& path : files) {
    const OpenFile f(path);
    if (f.fd >= 0) {
      // Dirty pages (a file just written: a dataset fresh from `mmprof gen` or a copy) are not
      // dropped: written back first.
      fdatasync(f.fd);
      posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    add_residency(f, r);
  }
  return r;
}

uint64_t read_into_page_cache(const std::vector<std::filesystem::path>& files) {
  std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  for (const auto& path : files) {
    const OpenFile f(path);
    if (f.fd < 0) continue;
    for (;;) {
      const ssize_t n = read(f.fd, buffer.data(), buffer.size());
      if (n <= 0) break;
      total += static_cast<uint64_t>(n);
    }
  }
  return total;
}

}  // namespace mmprof::env
