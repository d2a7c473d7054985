#pragma once
// The page cache of a dataset's files, without root: how much of them it holds (mincore over a
// read-only mapping of each file), emptying it for them (posix_fadvise POSIX_FADV_DONTNEED per
// file, which drops clean pages that no process maps) and filling it (reading them whole).
#include <cstdint>
#include <filesystem>
#include <vector>

namespace mmprof::env {

struct Residency {
  uint64_t pages = 0, resident = 0;  // of the files' pages, those in the page cache
  size_t unreadable = 0;             // files that could not be opened or mapped (not counted)
  double fraction() const noexcept {
    return pages == 0 ? 0.0 : static_cast<double>(resident) / static_cast<double>(pages);
  }
};

// What the page cache holds of `files` now.
Residency page_cache_residency(const std::vector<std::filesystem::path>& files);

// Writes the files' dirty pages back, then asks the kernel to drop their pages; what stays
// resident (pages a process maps, or a tmpfs holds) is in the returned residency.
Residency evict_from_page_cache(const std::vector<std::filesystem::path>& files);

// Reads every file whole, so that the page cache holds it (as far as memory allows); returns the
// bytes read.
uint64_t read_into_page_cache(const std::vector<std::filesystem::path>& files);

// The resident bit of each page of an open file of `size` bytes (empty when it cannot be mapped).
std::vector<unsigned char> resident_pages(int fd, uint64_t size);

}  // namespace mmprof::env
