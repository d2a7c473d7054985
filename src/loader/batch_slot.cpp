#include "loader/batch_slot.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "mmprof/loader.hpp"
#include "probe/procfs.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {
constexpr size_t kPage = 4096;
size_t page_align(size_t n) noexcept {
  return (n + kPage - 1) / kPage * kPage;
}
}  // namespace

namespace {
template <size_t N>
void copy_text(char (&field)[N], std::string_view text) noexcept {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}
}  // namespace

void set_message(SampleRecord& rec, std::string_view message) noexcept {
  copy_text(rec.message, message);
}

void set_source(SampleRecord& rec, std::string_view format, int width, int height) noexcept {
  copy_text(rec.format, format);
  rec.source_width = width;
  rec.source_height = height;
}

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
  if (decodes_on_device(c, Modality::image) || decodes_on_device(c, Modality::video)) {
    g.staging_bytes = static_cast<size_t>(c.decode.staging_mib) << 20;
  }
  return g;
}

BatchLayout batch_layout(const Config& config) {
  const SlotGeometry g = slot_geometry(config);
  return {g.capacity, g.tokens_bytes(), g.image_bytes(), g.video_bytes()};
}

size_t SlotGeometry::image_bytes() const noexcept {
  return 3 * static_cast<size_t>(image_size) * static_cast<size_t>(image_size) * pixel_bytes;
}

size_t SlotGeometry::video_bytes() const noexcept {
  return static_cast<size_t>(frames) * 3 * static_cast<size_t>(video_size) *
         static_cast<size_t>(video_size) * pixel_bytes;
}

size_t SlotGeometry::image_offset() const noexcept {
  return page_align(capacity * tokens_bytes());
}

size_t SlotGeometry::video_offset(uint32_t planned_images) const noexcept {
  return image_offset() + planned_images * image_bytes();
}

size_t SlotGeometry::payload_bytes(uint32_t n_images, uint32_t n_videos,
                                   uint32_t n_ok) const noexcept {
  return n_images * image_bytes() + n_videos * video_bytes() + n_ok * tokens_bytes();
}

size_t SlotGeometry::header_bytes() const noexcept {
  return page_align(sizeof(SlotHeader) + capacity * sizeof(SampleRecord));
}

size_t SlotGeometry::staging_offset() const noexcept {
  return image_offset() + page_align(capacity * std::max(image_bytes(), video_bytes()));
}

size_t SlotGeometry::arena_bytes() const noexcept {
  return staging_offset() + page_align(staging_bytes);
}

SlotRing::SlotRing(const SlotGeometry& geometry, uint32_t slots, bool huge_pages)
    : geometry_(geometry), slots_(slots), bytes_(geometry.slot_bytes() * slots) {
  const procfs::MemInfo pool = huge_pages ? procfs::ProcFs().meminfo() : procfs::MemInfo{};
  const size_t huge_page = static_cast<size_t>(pool.huge_page_kb.value_or(2048)) * 1024;
  if (huge_pages) bytes_ = (bytes_ + huge_page - 1) / huge_page * huge_page;
  // memfd pages are allocated on first touch, so worst-case reservations cost address space only
  // (hugetlbfs pages are reserved by mmap, and then owned until unmapped).
  const int fd = memfd_create("mmprof-batches", MFD_CLOEXEC | (huge_pages ? MFD_HUGETLB : 0u));
  if (fd < 0 && huge_pages) {
    throw RunError(
        fmt::format("loader.huge_pages=true, but this kernel cannot create a hugetlbfs "
                    "memfd for the batch ring: {}",
                    std::strerror(errno)));
  }
  if (fd < 0) throw_errno("memfd_create for", "the batch ring");
  if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    close(fd);
    throw RunError(fmt::format("cannot size the shared batch ring to {} MB", bytes_ >> 20));
  }
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED && huge_pages) {
    const int64_t need = static_cast<int64_t>(bytes_ / huge_page);
    const int64_t total = pool.huge_pages_total.value_or(0);
    const int64_t available = pool.huge_pages_free.value_or(0);
    throw RunError(fmt::format(
        "loader.huge_pages=true: the {} MB batch ring needs {} huge pages of {} kB, but the "
        "hugetlbfs pool has {} free of {} (HugePages_Free, HugePages_Total in /proc/meminfo); "
        "reserve them with `sysctl -w vm.nr_hugepages={}` or set loader.huge_pages=false",
        bytes_ >> 20, need, huge_page / 1024, available, total,
        total + std::max<int64_t>(0, need - available)));
  }
  if (p == MAP_FAILED) throw RunError(fmt::format("cannot map the {} MB batch ring", bytes_ >> 20));
  base_ = static_cast<std::byte*>(p);
}

void SlotRing::discard_arena(uint32_t i) const {
  if (madvise(slot(i).arena(), geometry_.arena_bytes(), MADV_REMOVE) != 0) {
    throw RunError(
        fmt::format("cannot discard the pages of batch slot {} (loader.buffer_reuse=false): {}", i,
                    std::strerror(errno)));
  }
}

SlotRing::~SlotRing() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

}  // namespace mmprof
