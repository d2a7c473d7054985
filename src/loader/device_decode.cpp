#include "loader/device_decode.hpp"

#include <fmt/format.h>

#include <cstring>
#include <new>

#include "decode/decode_error.hpp"
#include "loader/nvdec_decoder.hpp"
#include "loader/sample_decoder.hpp"
#include "mmprof/error.hpp"
#include "probe/clock.hpp"
#include "util/digest.hpp"

namespace mmprof {
namespace {

// The placement without a device: the CPU decoders of the workers, run in the main process. Its
// batches are the CPU placement's byte for byte, so it rehearses the whole path (staging,
// settling, ab's correctness check) and measures what moving decode onto the consumer's thread
// costs when nothing overlaps it.
class EmulatedDecoder final : public DeviceDecoder {
 public:
  explicit EmulatedDecoder(const Config& config) : decoder_(config) {}
  std::string describe() const override {
    return "emulated (the host decodes in the main process, standing in for the GPU)";
  }
  void decode(Modality modality, std::span<const uint8_t> bytes, uint64_t rng_key,
              SampleRecord& rec, std::byte* row) override {
    if (modality == Modality::video) {
      decoder_.video(bytes, rng_key, rec, row);
    } else {
      decoder_.image(bytes, rng_key, rec, row);
    }
  }

 private:
  SampleDecoder decoder_;
};

std::string placed_modalities(const Config& c) {
  const bool images = decodes_on_device(c, Modality::image);
  const bool videos = decodes_on_device(c, Modality::video);
  return images && videos ? "images and video" : images ? "images" : "video";
}

}  // namespace

std::unique_ptr<DeviceDecoder> make_device_decoder(const Config& config) {
  if (config.decode.gpu_backend == GpuDecodeBackend::emulated) {
    return std::make_unique<EmulatedDecoder>(config);
  }
  return make_nvdec_decoder(config);
}

DeviceDecodeStage::DeviceDecodeStage(const Config& config, std::unique_ptr<DeviceDecoder> decoder)
    : decoder_(std::move(decoder)),
      placement_(fmt::format("main process decodes {}: {}", placed_modalities(config),
                             decoder_->describe())) {}

// Gives a failed sample's token row back; its modality's later rows are given out by run().
void DeviceDecodeStage::drop_sample(const SlotView& slot, SampleRecord& rec, uint32_t token_row) {
  SlotHeader& h = slot.header();
  const size_t row_bytes = slot.geometry().tokens_bytes();
  std::byte* tokens = slot.arena() + h.tokens_offset;
  std::memmove(tokens + token_row * row_bytes, tokens + (token_row + 1) * row_bytes,
               (h.n_ok - token_row - 1) * row_bytes);
  h.n_ok--;
  (rec.modality == static_cast<uint8_t>(Modality::video) ? h.n_videos : h.n_images)--;
  h.n_failed++;
  rec.row = -1;
}

double DeviceDecodeStage::run(const SlotView& slot) {
  SlotHeader& h = slot.header();
  const SlotGeometry& g = slot.geometry();
  const int64_t t0 = monotonic_ns();
  uint32_t token_row = 0;
  int32_t next_row[2] = {0, 0};  // per modality, of the deferred samples decoded so far
  uint64_t digest = 0;
  bool any = false;
  std::byte* rows = decoder_->rows_base(slot);
  device_rows_ = decoder_->device_resident() ? rows : nullptr;
  for (uint32_t i = 0; i < h.planned; ++i) {
    SampleRecord& rec = slot.records()[i];
    if (rec.status != SampleStatus::ok) continue;
    if (rec.deferred == 0) {
      digest = digest_combine(digest, rec.digest);
      ++token_row;
      continue;
    }
    any = true;
    const auto modality = static_cast<Modality>(rec.modality);
    const bool video = modality == Modality::video;
    const int32_t row = next_row[video ? 1 : 0];
    std::byte* dst = rows + (video ? h.video_offset + row * g.video_bytes()
                                   : h.image_offset + row * g.image_bytes());
    const uint64_t caption_digest = rec.digest;
    const uint64_t rng_key = static_cast<uint64_t>(h.epoch) << 32 | rec.index;
    try {
      const auto* staged = reinterpret_cast<const uint8_t*>(slot.arena() + rec.staged_offset);
      decoder_->decode(modality, {staged, rec.staged_bytes}, rng_key, rec, dst);
      rec.row = row;
      next_row[video ? 1 : 0]++;
      rec.digest = digest_combine(rec.digest, caption_digest);
      digest = digest_combine(digest, rec.digest);
      ++token_row;
      continue;
    } catch (const DecodeError& e) {
      rec.status = SampleStatus::failed;
      rec.failed_stage = Stage::decode;
      set_message(rec, e.what());
    } catch (const std::bad_alloc&) {
      rec.status = SampleStatus::machine;
      rec.failed_stage = Stage::worker;
      set_message(rec, "out of memory (std::bad_alloc) while decoding it in the main process");
    } catch (const Error&) {
      throw;  // the device, not the sample: the run stops with the backend's sentence
    } catch (const std::exception& e) {
      rec.status = SampleStatus::failed;
      rec.failed_stage = Stage::augment;
      set_message(rec, e.what());
    }
    drop_sample(slot, rec, token_row);
  }
  if (!any) return 0;
  decoder_->finish();
  h.digest = digest;
  h.payload_bytes = g.payload_bytes(h.n_images, h.n_videos, h.n_ok);
  return static_cast<double>(monotonic_ns() - t0) / 1e6;
}

}  // namespace mmprof
