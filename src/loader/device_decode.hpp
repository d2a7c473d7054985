#pragma once
// Decode placed on the device (decode.device, image/video.decode_device = gpu): the workers only
// read a sample's compressed bytes into the slot's staging area; the main process decodes them
// here, into the rows the worker reserved, and settles the batch (rows, tokens, counts, digest)
// as if a worker had decoded it, so the consumer and every figure downstream see one kind of
// batch whatever the placement. docs/gpu.md.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loader/batch_slot.hpp"
#include "mmprof/config.hpp"

namespace mmprof {

// A backend that decodes one sample into its row. Throws DecodeError for a bad sample (anything
// else is charged to augment), and sets rec's source, flip, decode_ns, augment_ns and rec.digest
// to the pixels' digest.
class DeviceDecoder {
 public:
  virtual ~DeviceDecoder() = default;
  // "emulated: ...", or the engines and the device ("nvdec on NVIDIA H200, driver ...").
  virtual std::string describe() const = 0;
  virtual void decode(Modality modality, std::span<const uint8_t> bytes, uint64_t rng_key,
                      SampleRecord& rec, std::byte* row) = 0;
  // Where a batch's rows go, at the slot's offsets: the slot's own arena (host), or device
  // memory the backend owns (device_resident). Called once per batch, before its decodes.
  virtual bool device_resident() const { return false; }
  virtual std::byte* rows_base(const SlotView& slot) { return slot.arena(); }
  // Waits until the batch's rows are written (the GPU's queued work); then it is delivered.
  virtual void finish() {}
  // Samples the backend handed to the CPU (a format or profile it does not decode), so far, and
  // why the first of them was.
  virtual int64_t fallbacks() const { return 0; }
  virtual std::string fallback_reason() const { return ""; }
};

// The backend decode.gpu_backend names. Throws UnavailableError naming the key and the reason
// when it cannot run here (no GPU, no driver, FFmpeg without CUDA).
std::unique_ptr<DeviceDecoder> make_device_decoder(const Config& config);

// What the main process does with a delivered slot before the consumer sees it.
class DeviceDecodeStage {
 public:
  DeviceDecodeStage(const Config& config, std::unique_ptr<DeviceDecoder> decoder);
  // Decodes the slot's deferred samples in batch order. A sample that fails is marked failed
  // with its stage and message and gives its rows back: the later rows and tokens move up, so
  // both tensors stay contiguous. Returns the time it took in ms.
  double run(const SlotView& slot);
  // Where decode ran, for the summary: "main process: <backend>" with the modalities placed.
  const std::string& placement() const noexcept { return placement_; }
  // The device memory holding the last batch's rows (at the slot's offsets), or null when they
  // are in the slot on the host.
  const std::byte* device_rows() const noexcept { return device_rows_; }
  int64_t fallbacks() const { return decoder_->fallbacks(); }
  std::string fallback_reason() const { return decoder_->fallback_reason(); }

 private:
  void drop_sample(const SlotView& slot, SampleRecord& rec, uint32_t token_row);

  std::unique_ptr<DeviceDecoder> decoder_;
  std::string placement_;
  const std::byte* device_rows_ = nullptr;
};

}  // namespace mmprof
