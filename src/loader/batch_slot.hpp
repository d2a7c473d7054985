#pragma once
// The layout of one batch slot in the shared-memory ring. Main writes the plan (which samples),
// a worker fills in tensors and per-sample records, main reads them: only the 4-byte slot id
// travels through a pipe. Everything here is plain data at fixed offsets, valid in every process
// that mapped the ring.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mmprof/config.hpp"

namespace mmprof {

// quarantined: set by main on a sample whose worker died holding it twice; the next worker to
// fill the batch skips it as failed (stage worker) with main's message.
// `machine`: the worker could not process the sample for a reason of the machine, not of the
// data (the open-files limit, memory): main stops the run instead of counting a bad sample.
enum class SampleStatus : uint8_t { ok = 0, failed = 1, quarantined = 2, machine = 3 };
enum class Stage : uint8_t { read = 0, decode = 1, augment = 2, collate = 3, worker = 4 };
const char* stage_name(Stage s) noexcept;

struct SampleRecord {
  uint32_t index = 0;  // into Dataset::samples()
  uint8_t modality = 0;
  SampleStatus status = SampleStatus::ok;
  Stage failed_stage = Stage::read;
  uint8_t flipped = 0;
  int32_t row = -1;  // row in the image or video tensor (ok samples), -1 when failed
  int32_t worker = -1;
  int32_t tokens = 0;  // non-pad caption tokens
  int64_t t_start_ns = 0;
  int64_t read_ns = 0, decode_ns = 0, augment_ns = 0;
  uint64_t bytes = 0;     // media + caption bytes read
  uint16_t retries = 0;   // remote requests retried while reading it
  uint8_t continued = 0;  // its media read continued the worker's previous read (RangeReader)
  int64_t minflt = 0;     // minor page faults of the worker thread while handling the sample
  int64_t majflt = 0;
  uint64_t digest = 0;  // of the sample's pixels (HWC uint8 after augment) and flip
  // What the decoder's probe found, for the per-class breakdown: the image format's name in the
  // media-format table ("jpeg", "webp") or the video stream's codec ("h264", "vp9"), and the
  // source's width and height in pixels (the stream's for a video). Empty and 0 before the probe.
  char format[16] = {};
  int32_t source_width = 0, source_height = 0;
  // Decode placed on the device (image/video.decode_device=gpu): the worker read the sample and
  // left its compressed bytes at staged_offset in the slot's staging area, for the main process
  // to decode into `row`; until then `digest` is the caption's digest alone.
  uint8_t deferred = 0;
  uint32_t staged_bytes = 0;
  uint64_t staged_offset = 0;  // from the arena start
  char message[224] = {};
};

// The record's text fields, cut to fit and always NUL-terminated. set_source: the sample's class
// as the probe saw it (format or codec, source size), set before the decode, so a sample whose
// decode fails still names what it was.
void set_message(SampleRecord& rec, std::string_view message) noexcept;
void set_source(SampleRecord& rec, std::string_view format, int width, int height) noexcept;

struct SlotHeader {
  // Written by main when dispatching.
  uint64_t batch_id = 0;
  int64_t epoch = 0;
  uint32_t planned = 0;  // samples in the plan
  // data.layout=tar_stream: how far the worker's stream must be read first (EpochPlan).
  uint32_t read_until = 0;
  // Written by the worker.
  uint32_t n_ok = 0, n_images = 0, n_videos = 0, n_failed = 0;
  int32_t worker = -1;
  int64_t t_start_ns = 0, t_end_ns = 0;
  int64_t collate_ns = 0;  // tokens and batch assembly (pixels are written in place by augment)
  uint64_t image_offset = 0, video_offset = 0, tokens_offset = 0;  // from the arena start
  uint64_t payload_bytes = 0;  // bytes of tensors actually written
  uint64_t digest = 0;         // combination of the ok samples' digests in batch order
  // The record the worker is processing, -1 before and after: when a worker dies, main reads it
  // to name the sample it held. Accessed through held_record()/set_held_record().
  int32_t held = -1;
  // SampleRecord records[capacity] follows.
};

inline void set_held_record(SlotHeader& h, int32_t record) noexcept {
  std::atomic_ref<int32_t>(h.held).store(record, std::memory_order_release);
}
inline int32_t held_record(SlotHeader& h) noexcept {
  return std::atomic_ref<int32_t>(h.held).load(std::memory_order_acquire);
}

// Sizes of one slot, derived from the config. Pixels are packed: images first, then videos, so a
// slot reserves worst-case virtual space but only touches what its batches use.
struct SlotGeometry {
  uint32_t capacity = 0;  // batch_size
  int image_size = 0, video_size = 0, frames = 0, seq_len = 0;
  size_t pixel_bytes = 1;  // 1 (uint8) or 4 (float32)
  // Compressed bytes of the samples whose decode is placed on the device (decode.staging_mib),
  // 0 when every modality decodes in the workers.
  size_t staging_bytes = 0;
  size_t image_bytes() const noexcept;
  size_t video_bytes() const noexcept;
  size_t tokens_bytes() const noexcept { return static_cast<size_t>(seq_len) * sizeof(int32_t); }
  // The packed layout of a batch in the arena: tokens first (page aligned), then the images,
  // then the videos right after the images the plan holds.
  size_t image_offset() const noexcept;
  size_t video_offset(uint32_t planned_images) const noexcept;
  // Bytes of tensors a batch of n_ok samples, n_images and n_videos of them, fills.
  size_t payload_bytes(uint32_t n_images, uint32_t n_videos, uint32_t n_ok) const noexcept;
  // The staging area, after the worst-case pixels.
  size_t staging_offset() const noexcept;
  size_t header_bytes() const noexcept;  // header + records, page aligned
  size_t arena_bytes() const noexcept;   // tokens + worst-case pixels + staging, page aligned
  size_t slot_bytes() const noexcept { return header_bytes() + arena_bytes(); }
};

// The slot sizes a configuration needs (batch_size, image/video shape, seq_len, dtype).
SlotGeometry slot_geometry(const Config& config);

// A view of one slot in the mapped ring.
class SlotView {
 public:
  SlotView(std::byte* base, const SlotGeometry& g) noexcept : base_(base), geometry_(&g) {}
  SlotHeader& header() const noexcept { return *reinterpret_cast<SlotHeader*>(base_); }
  SampleRecord* records() const noexcept {
    return reinterpret_cast<SampleRecord*>(base_ + sizeof(SlotHeader));
  }
  std::byte* arena() const noexcept { return base_ + geometry_->header_bytes(); }
  const SlotGeometry& geometry() const noexcept { return *geometry_; }

 private:
  std::byte* base_;
  const SlotGeometry* geometry_;
};

// The ring: `slots` slots in one memfd mapped MAP_SHARED before workers are forked. With
// huge_pages (loader.huge_pages) the memfd comes from the hugetlbfs pool, reserved at mapping time:
// a pool too small is refused here, with its numbers, rather than by a SIGBUS later.
class SlotRing {
 public:
  SlotRing(const SlotGeometry& geometry, uint32_t slots, bool huge_pages = false);
  ~SlotRing();
  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;

  uint32_t size() const noexcept { return slots_; }
  SlotView slot(uint32_t i) const noexcept {
    return SlotView(base_ + static_cast<size_t>(i) * geometry_.slot_bytes(), geometry_);
  }
  const SlotGeometry& geometry() const noexcept { return geometry_; }
  size_t mapped_bytes() const noexcept { return bytes_; }
  // Gives slot i's tensor pages back to the kernel (loader.buffer_reuse=false): the next batch
  // written there faults in fresh pages, as a loader allocating a new shared tensor per batch does.
  void discard_arena(uint32_t i) const;

 private:
  SlotGeometry geometry_;
  uint32_t slots_;
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace mmprof
