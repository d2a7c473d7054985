#include "loader/batch_filler.hpp"

#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>

#include "data/tokenizer.hpp"
#include "data/utf8.hpp"
#include "decode/decode_error.hpp"
#include "probe/clock.hpp"
#include "trace/tracer.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

// Thrown inside one sample's handling to mark the stage that failed.
struct StageFailure {
  Stage stage;
  std::string message;
};

// Thrown when the machine, not the sample, failed: the run cannot go on meaningfully.
struct MachineFailure {
  std::string message;
};

void thread_faults(int64_t& minflt, int64_t& majflt) noexcept {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  minflt = ru.ru_minflt;
  majflt = ru.ru_majflt;
}

}  // namespace

BatchFiller::BatchFiller(const Config& config, const Dataset& dataset, int worker_id)
    : config_(config),
      dataset_(dataset),
      worker_id_(worker_id),
      decoder_(config),
      reader_(dataset,
              config.loader.worker_mode == WorkerMode::thread ? config.loader.num_workers : 1) {
  if (config.data.stream) stream_.emplace(config, dataset, worker_id);
  trace::worker_started(worker_id_);
}

BatchFiller::~BatchFiller() {
  trace::worker_stopped(worker_id_);
}

void BatchFiller::read_range(const ByteRange& range, std::vector<uint8_t>& buffer) {
  if (range.size == 0) {
    throw StageFailure{Stage::read,
                       fmt::format("{} is empty (0 bytes)", dataset_.files()[range.file])};
  }
  try {
    reader_.read(range, buffer);
  } catch (const ReadFailure& f) {
    if (f.machine) throw MachineFailure{f.message};
    throw StageFailure{Stage::read, f.message};
  }
}

// A media file above its modality's max_bytes is refused before a byte of it is read: the worker
// would hold all of it in memory to decode it.
bool BatchFiller::oversized(const SampleEntry& entry) const {
  const bool video = entry.modality == Modality::video;
  const int64_t limit = video ? config_.video.max_bytes : config_.image.max_bytes;
  return entry.media.size > static_cast<uint64_t>(limit);
}

void BatchFiller::refuse_oversized(const SampleEntry& entry) const {
  if (!oversized(entry)) return;
  const bool video = entry.modality == Modality::video;
  const int64_t limit = video ? config_.video.max_bytes : config_.image.max_bytes;
  throw StageFailure{
      Stage::read,
      fmt::format("{} is {} bytes ({:.1f} MiB), above {}={}: refused before it is read",
                  dataset_.media_location(entry), entry.media.size,
                  static_cast<double>(entry.media.size) / (1 << 20),
                  video ? "video.max_bytes" : "image.max_bytes", limit)};
}

// A caption is refused above text.max_bytes before a byte of it is read, and when it is not
// UTF-8 (a Python loader reading it as str would raise UnicodeDecodeError).
void BatchFiller::read_caption(const ByteRange& range) {
  if (range.size > static_cast<uint64_t>(config_.text.max_bytes)) {
    throw StageFailure{Stage::read, fmt::format("caption is {} bytes, above text.max_bytes={}",
                                                range.size, config_.text.max_bytes)};
  }
  read_range(range, caption_);
  check_caption_text(range.size);
}

void BatchFiller::check_caption_text(uint64_t size) const {
  const std::string_view text(reinterpret_cast<const char*>(caption_.data()), size);
  if (const auto bad = first_invalid_utf8(text)) {
    throw StageFailure{Stage::decode,
                       fmt::format("caption is not valid UTF-8 (byte 0x{:02X} at offset {})",
                                   static_cast<uint8_t>(text[*bad]), *bad)};
  }
}

// A streamed sample's bytes, read when the worker's stream reached it: its read time is that
// read's, and a failure then is its failure now.
void BatchFiller::take_streamed(SampleRecord& rec, const SampleEntry& entry) {
  HeldSample* held = stream_->take(rec.index);
  if (held == nullptr) {
    throw MachineFailure{
        fmt::format("sample {} is not in worker {}'s shard stream", entry.key, worker_id_)};
  }
  rec.read_ns = held->read_ns;
  rec.continued = held->continued ? 1 : 0;
  if (held->failure) {
    if (held->failure->machine) throw MachineFailure{held->failure->message};
    throw StageFailure{Stage::read, held->failure->message};
  }
  media_.swap(held->media);
  if (!entry.has_caption) return;
  if (entry.caption.size > static_cast<uint64_t>(config_.text.max_bytes)) {
    throw StageFailure{Stage::read, fmt::format("caption is {} bytes, above text.max_bytes={}",
                                                entry.caption.size, config_.text.max_bytes)};
  }
  caption_.swap(held->caption);
  check_caption_text(entry.caption.size);
}

// Main quarantined this sample after it took down a worker twice: it fails at stage worker with
// main's message, without being touched again.
void BatchFiller::skip_quarantined(SampleRecord& rec) const noexcept {
  rec.status = SampleStatus::failed;
  rec.failed_stage = Stage::worker;
  rec.worker = worker_id_;
  rec.row = -1;
  rec.read_ns = rec.decode_ns = rec.augment_ns = 0;
  rec.bytes = 0;
  rec.retries = 0;
  rec.continued = 0;
  rec.minflt = rec.majflt = 0;
  set_source(rec, "", 0, 0);
}

// malloc would hand the freed blocks straight back, already faulted in; malloc_trim returns the
// free pages to the kernel, so the next sample's buffers fault in fresh pages.
void BatchFiller::release_buffers() noexcept {
  for (auto* buffer : {&media_, &caption_})
    std::vector<uint8_t>().swap(*buffer);
  decoder_.release();
  malloc_trim(0);
}

void BatchFiller::decode_sample(SampleRecord& rec, const SampleEntry& entry, void* dst,
                                uint64_t rng_key) {
  const std::span<const uint8_t> bytes(media_.data(), entry.media.size);
  try {
    if (entry.modality == Modality::video) {
      decoder_.video(bytes, rng_key, rec, dst);
    } else {
      decoder_.image(bytes, rng_key, rec, dst);
    }
  } catch (const DecodeError& e) {
    throw StageFailure{Stage::decode, e.what()};
  }
}

void BatchFiller::stage_for_device(const SlotView& slot, SampleRecord& rec,
                                   const SampleEntry& entry) {
  const SlotGeometry& g = slot.geometry();
  if (entry.media.size > g.staging_bytes - staged_) {
    throw StageFailure{
        Stage::read,
        fmt::format("its {} bytes do not fit what is left of the batch slot's staging area for "
                    "decode on the device ({} of decode.staging_mib={}); raise decode.staging_mib",
                    entry.media.size, g.staging_bytes - staged_, g.staging_bytes >> 20)};
  }
  rec.deferred = 1;
  rec.staged_offset = g.staging_offset() + staged_;
  rec.staged_bytes = static_cast<uint32_t>(entry.media.size);
  std::memcpy(slot.arena() + rec.staged_offset, media_.data(), entry.media.size);
  staged_ += entry.media.size;
}

void BatchFiller::begin_batch(const SlotView& slot) {
  SlotHeader& h = slot.header();
  const SlotGeometry& g = slot.geometry();
  h.worker = worker_id_;
  h.t_start_ns = monotonic_ns();
  h.n_ok = h.n_images = h.n_videos = h.n_failed = 0;
  uint32_t planned_images = 0;
  upcoming_.clear();
  for (uint32_t i = 0; i < h.planned; ++i) {
    const SampleRecord& rec = slot.records()[i];
    const SampleEntry& entry = dataset_.samples()[rec.index];
    planned_images += entry.modality == Modality::image;
    // The bytes the batch will read, in order, so a remote dataset's requests overlap decode.
    if (rec.status == SampleStatus::quarantined || oversized(entry)) continue;
    upcoming_.push_back(entry.media);
    if (entry.has_caption && entry.caption.size <= static_cast<uint64_t>(config_.text.max_bytes)) {
      upcoming_.push_back(entry.caption);
    }
  }
  if (stream_) {
    stream_->advance(h.epoch, h.read_until, reader_);
  } else {
    reader_.begin(upcoming_);
  }
  h.tokens_offset = 0;
  h.image_offset = g.image_offset();
  h.video_offset = g.video_offset(planned_images);
  collate_ns_ = 0;
  digest_ = 0;
  staged_ = 0;
}

void BatchFiller::collate_sample(const SlotView& slot, SampleRecord& rec, const SampleEntry& entry,
                                 bool video) {
  SlotHeader& h = slot.header();
  const int seq_len = slot.geometry().seq_len;
  const int64_t t_collate = monotonic_ns();
  auto* tokens = reinterpret_cast<int32_t*>(slot.arena() + h.tokens_offset);
  const std::string_view caption =
      entry.has_caption
          ? std::string_view(reinterpret_cast<const char*>(caption_.data()), entry.caption.size)
          : std::string_view();
  rec.tokens = tokenize_bytes(caption, tokens + static_cast<size_t>(h.n_ok) * seq_len, seq_len);
  // A deferred sample's pixels are combined in by the main process once they are decoded.
  const uint64_t caption_digest = digest64(caption.data(), caption.size());
  rec.digest = rec.deferred != 0 ? caption_digest : digest_combine(rec.digest, caption_digest);
  digest_ = digest_combine(digest_, rec.digest);
  rec.row = static_cast<int32_t>(video ? h.n_videos : h.n_images);
  (video ? h.n_videos : h.n_images)++;
  h.n_ok++;
  const int64_t t_collated = monotonic_ns();
  collate_ns_ += t_collated - t_collate;
  trace::collate(worker_id_, h.batch_id, rec.index, t_collate, t_collated);
}

void BatchFiller::fill_sample(const SlotView& slot, uint32_t i) {
  SlotHeader& h = slot.header();
  const SlotGeometry& g = slot.geometry();
  SampleRecord& rec = slot.records()[i];
  const SampleEntry& entry = dataset_.samples()[rec.index];
  if (rec.status == SampleStatus::quarantined) {
    skip_quarantined(rec);
    h.n_failed++;
    return;
  }
  set_held_record(h, static_cast<int32_t>(i));
  hooks_.before_sample(entry.key);
  rec.worker = worker_id_;
  rec.modality = static_cast<uint8_t>(entry.modality);
  rec.status = SampleStatus::ok;
  rec.read_ns = rec.decode_ns = rec.augment_ns = 0;
  rec.message[0] = '\0';
  set_source(rec, "", 0, 0);
  rec.row = -1;
  rec.deferred = 0;
  rec.staged_bytes = 0;
  int64_t flt0, maj0;
  thread_faults(flt0, maj0);
  rec.t_start_ns = monotonic_ns();
  const uint64_t rng_key = static_cast<uint64_t>(h.epoch) << 32 | rec.index;
  try {
    refuse_oversized(entry);
    if (stream_) {
      take_streamed(rec, entry);
    } else {
      read_range(entry.media, media_);
      rec.continued = reader_.continued() ? 1 : 0;
      if (entry.has_caption) read_caption(entry.caption);
      rec.read_ns = monotonic_ns() - rec.t_start_ns;
    }
    rec.bytes = entry.media.size + (entry.has_caption ? entry.caption.size : 0);
    const bool video = entry.modality == Modality::video;
    std::byte* dst = slot.arena() + (video ? h.video_offset + h.n_videos * g.video_bytes()
                                           : h.image_offset + h.n_images * g.image_bytes());
    if (decodes_on_device(config_, entry.modality)) {
      stage_for_device(slot, rec, entry);
    } else {
      decode_sample(rec, entry, dst, rng_key);
    }
    collate_sample(slot, rec, entry, video);
  } catch (const StageFailure& f) {
    rec.status = SampleStatus::failed;
    rec.failed_stage = f.stage;
    set_message(rec, f.message);
    h.n_failed++;
  } catch (const MachineFailure& f) {
    rec.status = SampleStatus::machine;
    rec.failed_stage = Stage::read;
    set_message(rec, f.message);
    h.n_failed++;
  } catch (const std::bad_alloc&) {
    rec.status = SampleStatus::machine;
    rec.failed_stage = Stage::worker;
    set_message(rec, "out of memory (std::bad_alloc) while processing it");
    h.n_failed++;
  } catch (const std::exception& e) {
    // Anything else (a resize of a degenerate crop) is charged to augment.
    rec.status = SampleStatus::failed;
    rec.failed_stage = Stage::augment;
    set_message(rec, e.what());
    h.n_failed++;
  }
  rec.retries = static_cast<uint16_t>(std::min<uint32_t>(reader_.take_retries(), UINT16_MAX));
  int64_t flt1, maj1;
  thread_faults(flt1, maj1);
  rec.minflt = flt1 - flt0;
  rec.majflt = maj1 - maj0;
  if (!config_.loader.buffer_reuse) release_buffers();
  trace::sample(worker_id_, h.batch_id, rec.index, rec.t_start_ns, rec.read_ns, rec.decode_ns,
                rec.augment_ns,
                rec.status == SampleStatus::ok ? -1 : static_cast<int>(rec.failed_stage));
}

void BatchFiller::fill(const SlotView& slot) {
  begin_batch(slot);
  SlotHeader& h = slot.header();
  for (uint32_t i = 0; i < h.planned; ++i)
    fill_sample(slot, i);
  // A failed sample takes no row, so both tensors stay contiguous: n_images rows from
  // image_offset, n_videos rows from video_offset.
  h.payload_bytes = slot.geometry().payload_bytes(h.n_images, h.n_videos, h.n_ok);
  set_held_record(h, -1);
  h.digest = digest_;
  h.collate_ns = collate_ns_;
  h.t_end_ns = monotonic_ns();
  trace::batch(worker_id_, h.batch_id, h.epoch, h.t_start_ns, h.t_end_ns, h.n_ok, h.n_failed);
}

}  // namespace mmprof
