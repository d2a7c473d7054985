#pragma once
// What a worker does with one batch slot: read, decode, augment every planned sample into the
// slot's tensors, tokenize captions and record per-sample timings. A sample whose modality decodes
// on the device is only read: its bytes are staged in the slot for the main process. One
// BatchFiller per worker; it owns the decoders and every scratch buffer, so a warm worker allocates
// nothing per sample (unless loader.buffer_reuse=false, which frees the buffers after every sample
// to measure that).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/range_reader.hpp"
#include "loader/batch_slot.hpp"
#include "loader/fault_hooks.hpp"
#include "loader/sample_decoder.hpp"
#include "loader/shard_stream.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"

namespace mmprof {

class BatchFiller {
 public:
  BatchFiller(const Config& config, const Dataset& dataset, int worker_id);
  ~BatchFiller();
  BatchFiller(const BatchFiller&) = delete;
  BatchFiller& operator=(const BatchFiller&) = delete;

  // Fills the slot whose header holds a plan (batch_id, epoch, planned, records[].index).
  // Never throws for a bad sample: it is marked failed with its stage and message (or `machine`
  // when the machine, not the sample, was at fault).
  void fill(const SlotView& slot);

 private:
  // Resets the header and lays the batch out from the plan (SlotGeometry's packed layout).
  void begin_batch(const SlotView& slot);
  // One planned sample, start to end: read, decode, augment into its row, tokenize its caption.
  void fill_sample(const SlotView& slot, uint32_t i);
  // Tokens and content digest of a sample whose pixels are in place: its row becomes taken.
  void collate_sample(const SlotView& slot, SampleRecord& rec, const SampleEntry& entry,
                      bool video);
  bool oversized(const SampleEntry& entry) const;
  void refuse_oversized(const SampleEntry& entry) const;
  void read_range(const ByteRange& range, std::vector<uint8_t>& buffer);
  void read_caption(const ByteRange& range);
  void check_caption_text(uint64_t size) const;
  void take_streamed(SampleRecord& rec, const SampleEntry& entry);
  void skip_quarantined(SampleRecord& rec) const noexcept;
  void decode_sample(SampleRecord& rec, const SampleEntry& entry, void* dst, uint64_t rng_key);
  // Decode placed on the device: the media bytes go to the slot's staging area for main.
  void stage_for_device(const SlotView& slot, SampleRecord& rec, const SampleEntry& entry);
  void release_buffers() noexcept;

  const Config& config_;
  const Dataset& dataset_;
  int worker_id_;
  SampleDecoder decoder_;
  std::vector<uint8_t> media_, caption_;
  RangeReader reader_;
  std::optional<ShardStream> stream_;  // data.layout=tar_stream
  std::vector<ByteRange> upcoming_;    // the batch's ranges, announced to reader_
  FaultHooks hooks_;
  // Per batch, summed over its samples.
  int64_t collate_ns_ = 0;
  uint64_t digest_ = 0;
  uint64_t staged_ = 0;  // bytes of the staging area used
};

}  // namespace mmprof
