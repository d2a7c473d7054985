#include "loader/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "gpu/cuda_runtime.hpp"
#include "loader/batch_slot.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

std::string mb(uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

uint32_t ring_slots_per_worker(const LoaderConfig& loader) noexcept {
  return static_cast<uint32_t>(loader.num_workers == 0 ? 2 : loader.prefetch_factor + 1);
}

uint32_t ring_slots(const LoaderConfig& loader) noexcept {
  return ring_slots_per_worker(loader) * static_cast<uint32_t>(std::max(1, loader.num_workers));
}

uint64_t HostMemoryPlan::ring_bytes() const noexcept {
  return static_cast<uint64_t>(workers) * slots_per_worker * slot_bytes;
}

uint64_t HostMemoryPlan::prefetch_bytes() const noexcept {
  return static_cast<uint64_t>(workers) * prefetch_per_worker * slot_bytes;
}

uint64_t HostMemoryPlan::scratch_bytes() const noexcept {
  return static_cast<uint64_t>(workers) * scratch_per_worker;
}

uint64_t HostMemoryPlan::read_buffer_bytes() const noexcept {
  return static_cast<uint64_t>(workers) * read_buffer_per_worker;
}

uint64_t HostMemoryPlan::decoded_bytes() const noexcept {
  return static_cast<uint64_t>(workers) * decoded_per_worker;
}

uint64_t HostMemoryPlan::total_bytes() const noexcept {
  return ring_bytes() + pinned_bytes + scratch_bytes() + read_buffer_bytes() + decoded_bytes();
}

std::string HostMemoryPlan::arithmetic() const {
  return fmt::format(
      "shared batch ring {} workers x {} slots x {} = {} (of which prefetch {} x {} slots = {}) + "
      "pinned {} + worker scratch {} x {} = {} + read buffers {} x {} (the larger of "
      "image.max_bytes and video.max_bytes, plus text.max_bytes) = {} + decoded images {} x {} "
      "(image.max_pixels x {} B: a 16-bit RGBA frame and its RGB copy) = {} = {}",
      workers, slots_per_worker, mb(slot_bytes), mb(ring_bytes()), workers, prefetch_per_worker,
      mb(prefetch_bytes()), pinned_bytes == 0 ? "0 MiB (pageable)" : mb(pinned_bytes), workers,
      mb(scratch_per_worker), mb(scratch_bytes()), workers, mb(read_buffer_per_worker),
      mb(read_buffer_bytes()), workers, mb(decoded_per_worker), kDecodedImageBytesPerPixel,
      mb(decoded_bytes()), mb(total_bytes()));
}

bool uses_pinned_memory(PinMemory setting) {
  return setting == PinMemory::on ||
         (setting == PinMemory::auto_detect && gpu::gpu_availability().available);
}

HostMemoryPlan plan_host_memory(const Config& config, bool pinned) {
  const SlotGeometry g = slot_geometry(config);
  HostMemoryPlan p;
  p.workers = std::max(1, config.loader.num_workers);
  p.slots_per_worker = ring_slots_per_worker(config.loader);
  p.prefetch_per_worker = p.slots_per_worker - 1;
  p.slot_bytes = g.slot_bytes();
  p.pinned_bytes = pinned ? g.staging_offset() : 0;  // the tensors, not the staging area
  // BatchFiller's HWC buffer for one augmented image or clip (see its constructor).
  const uint64_t image =
      3ull * static_cast<uint64_t>(config.image.size) * static_cast<uint64_t>(config.image.size);
  const uint64_t video = 3ull * static_cast<uint64_t>(config.video.frames) *
                         static_cast<uint64_t>(config.video.size) *
                         static_cast<uint64_t>(config.video.size);
  p.scratch_per_worker = std::max(image, video);
  // BatchFiller's media and caption buffers: a file above its modality's max_bytes, or a caption
  // above text.max_bytes, is refused before it is read.
  p.read_buffer_per_worker =
      static_cast<uint64_t>(std::max(config.image.max_bytes, config.video.max_bytes)) +
      static_cast<uint64_t>(config.text.max_bytes);
  p.decoded_per_worker =
      static_cast<uint64_t>(config.image.max_pixels) * kDecodedImageBytesPerPixel;
  return p;
}

uint64_t parse_byte_size(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end != nullptr ? end : "");
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  static const std::pair<const char*, int> kUnits[] = {
      {"", 0},    {"B", 0}, {"K", 1},  {"KB", 1},  {"KIB", 1}, {"M", 2},  {"MB", 2},
      {"MIB", 2}, {"G", 3}, {"GB", 3}, {"GIB", 3}, {"T", 4},   {"TB", 4}, {"TIB", 4}};
  for (const auto& [name, power] : kUnits) {
    if (unit != name) continue;
    const double bytes = value * std::pow(1024.0, power);
    if (end == text.c_str() || !std::isfinite(bytes) || bytes <= 0 || bytes > 1.8e19) break;
    return static_cast<uint64_t>(bytes);
  }
  throw UsageError(fmt::format(
      "{} '{}' must be a positive size such as 512M, 16G or 1.5GiB (K/M/G/T: powers of 1024)",
      option, text));
}

void check_host_memory(const HostMemoryPlan& plan, uint64_t limit_bytes) {
  if (plan.total_bytes() <= limit_bytes) return;
  throw UsageError(
      fmt::format("the loader could hold up to {} of host memory, above "
                  "--max-host-memory={}: {}",
                  mb(plan.total_bytes()), mb(limit_bytes), plan.arithmetic()));
}

}  // namespace mmprof
