#pragma once
// The host memory a loader configuration may hold, for --max-host-memory: the shared batch ring
// (each worker's prefetched batches plus the one the consumer holds), the pinned copy of one
// batch, each worker's tensor scratch, and each worker's read buffers (a worker reads a whole
// file into memory to decode it: at most the larger of image.max_bytes and video.max_bytes, plus
// a caption of text.max_bytes). Worst case: every slot sized for its largest modality, every
// worker having read the largest file the limits let through. Decoded source images are not
// counted (they depend on the data; each is bounded by image.max_pixels x 3 bytes).
#include <cstdint>
#include <string>

#include "mmprof/config.hpp"

namespace mmprof {

// Slots of the ring: prefetch_factor + 1 per worker (2 with no workers), so a worker keeps
// writing into its own pages (see Loader).
uint32_t ring_slots_per_worker(const LoaderConfig& loader) noexcept;
uint32_t ring_slots(const LoaderConfig& loader) noexcept;

// What a worker holds of one decoded source image, per pixel, at most: FFmpeg's frame of up to
// 8 bytes (a 16-bit RGBA PNG or TIFF) and the RGB copy cropped and resized from (3 bytes).
// Measured (docs/reliability.md): a 13000x13000 8-bit RGBA PNG peaks at 7.2 bytes a pixel.
inline constexpr uint64_t kDecodedImageBytesPerPixel = 8 + 3;

struct HostMemoryPlan {
  int workers = 0;  // at least 1: the inline loader owns slots too
  uint32_t slots_per_worker = 0;
  uint32_t prefetch_per_worker = 0;
  uint64_t slot_bytes = 0;    // one ring slot (header, records, worst-case tensors)
  uint64_t pinned_bytes = 0;  // 0 when pageable
  uint64_t scratch_per_worker = 0;
  uint64_t read_buffer_per_worker = 0;  // max(image.max_bytes, video.max_bytes) + text.max_bytes
  // A decoded source image: image.max_pixels x kDecodedImageBytesPerPixel.
  uint64_t decoded_per_worker = 0;

  uint64_t ring_bytes() const noexcept;
  uint64_t prefetch_bytes() const noexcept;
  uint64_t scratch_bytes() const noexcept;
  uint64_t read_buffer_bytes() const noexcept;
  uint64_t decoded_bytes() const noexcept;
  uint64_t total_bytes() const noexcept;
  // "shared batch ring 2 workers x 3 slots x 9.4 MB = 56.5 MB (prefetch: 2 x 2 slots = ...) +
  // pinned ... + worker scratch ... + read buffers ... = total"
  std::string arithmetic() const;
};

// Whether the loader copies batches into pinned memory: pin_memory=true, or auto with a GPU.
bool uses_pinned_memory(PinMemory setting);

HostMemoryPlan plan_host_memory(const Config& config, bool pinned);

// "512M", "16G", "1.5GiB", "2000000" (bytes); K/M/G/T are powers of 1024. Throws UsageError
// naming `option`.
uint64_t parse_byte_size(const std::string& text, const std::string& option);

// Throws UsageError with the arithmetic when the plan exceeds `limit_bytes`.
void check_host_memory(const HostMemoryPlan& plan, uint64_t limit_bytes);

}  // namespace mmprof
