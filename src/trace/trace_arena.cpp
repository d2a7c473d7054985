#include "trace/trace_arena.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "util/error.hpp"

namespace mmprof::trace {
namespace {

constexpr size_t kPage = 4096;

size_t page_round(size_t n) {
  return (n + kPage - 1) / kPage * kPage;
}

}  // namespace

// Atomics in a MAP_SHARED mapping work across processes only when they are lock-free (then
// they are plain memory operations, address-free).
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic_ref<uint16_t>::is_always_lock_free);

struct alignas(64) TraceArena::Header {
  std::atomic<uint64_t> used{0};  // records admitted under the global budget
  std::atomic<uint32_t> generation{0};
  std::atomic<uint64_t> unrouted{0};  // records for a region that does not exist
};

struct alignas(64) TraceArena::RegionHeader {
  std::atomic<uint64_t> count{0};  // claimed slots
  std::atomic<uint64_t> dropped{0};
};

TraceArena::TraceArena(uint32_t regions, uint64_t max_events, uint32_t sample_every)
    : regions_(regions),
      max_events_(max_events),
      sample_every_(sample_every == 0 ? 1 : sample_every) {
  region_bytes_ = page_round(sizeof(RegionHeader) + max_events * sizeof(TraceRecord));
  bytes_ = kPage + static_cast<size_t>(regions) * region_bytes_;
  const int fd = memfd_create("mmprof-trace", MFD_CLOEXEC);
  if (fd < 0) throw_errno("memfd_create for", "the trace buffers");
  if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throw_errno("ftruncate of", fmt::format("the trace buffers ({} bytes)", bytes_));
  }
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int saved = errno;
  ::close(fd);  // the mapping keeps the memory alive
  if (p == MAP_FAILED) {
    errno = saved;
    throw_errno("mmap of", fmt::format("the trace buffers ({} bytes)", bytes_));
  }
  base_ = static_cast<std::byte*>(p);
  // The memfd starts zeroed; constructing the atomics in place makes that explicit.
  new (base_) Header();
  for (uint32_t i = 0; i < regions_; ++i)
    new (&region(i)) RegionHeader();
}

TraceArena::~TraceArena() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

TraceArena::RegionHeader& TraceArena::region(uint32_t i) const noexcept {
  return *reinterpret_cast<RegionHeader*>(base_ + kPage + static_cast<size_t>(i) * region_bytes_);
}

TraceRecord* TraceArena::slots(uint32_t i) const noexcept {
  return reinterpret_cast<TraceRecord*>(reinterpret_cast<std::byte*>(&region(i)) +
                                        sizeof(RegionHeader));
}

void TraceArena::append(uint32_t i, const TraceRecord& record) noexcept {
  auto& header = *reinterpret_cast<Header*>(base_);
  if (i >= regions_) {
    header.unrouted.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  RegionHeader& r = region(i);
  // Relaxed: the budget only needs each admission counted once, not ordered with the data.
  if (header.used.fetch_add(1, std::memory_order_relaxed) >= max_events_) {
    r.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Below capacity: every region can hold the whole budget, and only admitted records claim.
  TraceRecord& slot = slots(i)[r.count.fetch_add(1, std::memory_order_relaxed)];
  slot = record;
  slot.generation = header.generation.load(std::memory_order_relaxed);
  // Release: a reader that sees the flag sees the record's bytes.
  std::atomic_ref<uint16_t>(slot.published).store(1, std::memory_order_release);
}

void TraceArena::next_generation() noexcept {
  reinterpret_cast<Header*>(base_)->generation.fetch_add(1, std::memory_order_relaxed);
}

std::span<const TraceRecord> TraceArena::records(uint32_t i) const noexcept {
  if (i >= regions_) return {};
  return {slots(i), region(i).count.load(std::memory_order_acquire)};
}

bool TraceArena::published(const TraceRecord& slot) noexcept {
  // atomic_ref needs a mutable object; the load does not write.
  return std::atomic_ref<uint16_t>(const_cast<uint16_t&>(slot.published))
             .load(std::memory_order_acquire) != 0;
}

uint64_t TraceArena::dropped(uint32_t i) const noexcept {
  return i < regions_ ? region(i).dropped.load(std::memory_order_relaxed) : 0;
}

uint64_t TraceArena::dropped_total() const noexcept {
  uint64_t total = reinterpret_cast<const Header*>(base_)->unrouted.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < regions_; ++i)
    total += dropped(i);
  return total;
}

}  // namespace mmprof::trace
