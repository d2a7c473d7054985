#include "loader/batch_slot.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/error.hpp"

namespace mmprof {
namespace {
constexpr size_t kPage = 4096;
size_t page_align(size_t n) noexcept {
  return (n + kPage - 1) / kPage * kPage;
}
}  // namespace

const char* stage_name(Stage s) noexcept {
  switch (s) {
    case Stage::read:
      return "read";
    case Stage::decode:
      return "decode";
    case Stage::augment:
      return "augment";
    case Stage::collate:
      return "collate";
    case Stage::worker:
      return "worker";
  }
  return "unknown";
}

SlotGeometry slot_geometry(const Config& c) {
  SlotGeometry g;
  g.capacity = static_cast<uint32_t>(c.loader.batch_size);
  g.image_size = c.image.size;
  g.video_size = c.video.size;
  g.frames = c.video.frames;
  g.seq_len = c.text.seq_len;
  g.pixel_bytes = c.image.dtype == ImageDType::uint8 ? 1 : 4;
  return g;
}

size_t SlotGeometry::image_bytes() const noexcept {
  return 3 * static_cast<size_t>(image_size) * static_cast<size_t>(image_size) * pixel_bytes;
}

size_t SlotGeometry::video_bytes() const noexcept {
  return static_cast<size_t>(frames) * 3 * static_cast<size_t>(video_size) *
         static_cast<size_t>(video_size) * pixel_bytes;
}

size_t SlotGeometry::header_bytes() const noexcept {
  return page_align(sizeof(SlotHeader) + capacity * sizeof(SampleRecord));
}

size_t SlotGeometry::arena_bytes() const noexcept {
  const size_t tokens = page_align(capacity * static_cast<size_t>(seq_len) * sizeof(int32_t));
  return tokens + page_align(capacity * std::max(image_bytes(), video_bytes()));
}

SlotRing::SlotRing(const SlotGeometry& geometry, uint32_t slots)
    : geometry_(geometry), slots_(slots), bytes_(geometry.slot_bytes() * slots) {
  // memfd pages are allocated on first touch, so worst-case reservations cost address space only.
  const int fd = memfd_create("mmprof-batches", MFD_CLOEXEC);
  if (fd < 0) throw_errno("memfd_create for", "the batch ring");
  if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    close(fd);
    throw RunError(fmt::format("cannot size the shared batch ring to {} MB", bytes_ >> 20));
  }
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw RunError(fmt::format("cannot map the {} MB batch ring", bytes_ >> 20));
  base_ = static_cast<std::byte*>(p);
}

SlotRing::~SlotRing() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

}  // namespace mmprof
