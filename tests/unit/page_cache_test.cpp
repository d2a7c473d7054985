// The page cache of a set of files without root (env/page_cache.hpp): mincore's residency,
// posix_fadvise's eviction and what it cannot evict (pages this process maps; a tmpfs keeps
// everything), and filling it by reading. Checked against the kernel's own account: the bytes
// /proc/self/io says were read from the device after an eviction.
#include "env/page_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace mmprof::env {
namespace {

namespace fs = std::filesystem;

// /proc/self/io read_bytes: what this process caused to be read from storage.
uint64_t device_read_bytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value)
    if (key == "read_bytes:") return value;
  return 0;
}

bool on_tmpfs(const fs::path& p) {
  struct statfs st {};
  return statfs(p.c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
}

class PageCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 6; ++i) {
      files.push_back(dir.path() / ("f" + std::to_string(i)));
      std::vector<uint8_t> bytes(static_cast<size_t>(100'000 + 30'000 * i),
                                 static_cast<uint8_t>(i));
      test::write_bytes(files.back(), bytes);
      total += bytes.size();
      pages += (bytes.size() + 4095) / 4096;
    }
  }
  test::TempDir dir;
  std::vector<fs::path> files;
  uint64_t total = 0, pages = 0;
};

TEST_F(PageCacheTest, EvictionEmptiesTheCacheAndReadingFillsItAgain) {
  EXPECT_EQ(read_into_page_cache(files), total);
  const Residency warm = page_cache_residency(files);
  EXPECT_EQ(warm.pages, pages);
  EXPECT_EQ(warm.resident, warm.pages);
  EXPECT_EQ(warm.unreadable, 0u);
  const Residency after = evict_from_page_cache(files);
  if (on_tmpfs(dir.path())) {
    // tmpfs pages are the files themselves: nothing can be dropped, and the residency says so.
    EXPECT_EQ(after.resident, after.pages);
    MMPROF_SKIP_WITHOUT("evictable-tmp", dir.path()
                                             << " is on tmpfs: eviction is not possible there");
  }
  EXPECT_EQ(after.resident, 0u);
  EXPECT_EQ(after.fraction(), 0.0);
  // The kernel agrees: reading them again goes to the device, about their size (whole pages).
  const uint64_t before = device_read_bytes();
  EXPECT_EQ(read_into_page_cache(files), total);
  const uint64_t read = device_read_bytes() - before;
  EXPECT_GE(read, total);
  EXPECT_LE(read, total + files.size() * 4096);
  EXPECT_EQ(page_cache_residency(files).fraction(), 1.0);
}

TEST_F(PageCacheTest, PagesAProcessMapsStayAndAreCounted) {
  if (on_tmpfs(dir.path())) MMPROF_SKIP_WITHOUT("evictable-tmp", dir.path() << " is on tmpfs");
  read_into_page_cache(files);
  const int fd = open(files[2].c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const size_t size = fs::file_size(files[2]);
  auto* map = static_cast<volatile uint8_t*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
  ASSERT_NE(map, MAP_FAILED);
  uint64_t sum = 0;
  for (size_t i = 0; i < size; i += 4096)
    sum += map[i];  // every page mapped into this process
  EXPECT_EQ(sum, 2u * 40);
  const Residency after = evict_from_page_cache(files);
  EXPECT_EQ(after.resident, 40u);  // exactly the mapped file's pages are left
  munmap(const_cast<uint8_t*>(map), size);
  close(fd);
}

TEST_F(PageCacheTest, MissingFilesAreCountedNotFatal) {
  std::vector<fs::path> some = files;
  some.push_back(dir.path() / "missing");
  const Residency r = evict_from_page_cache(some);
  EXPECT_EQ(r.unreadable, 1u);
  EXPECT_EQ(page_cache_residency(some).unreadable, 1u);
  EXPECT_EQ(read_into_page_cache(some), total);
}

}  // namespace
}  // namespace mmprof::env
