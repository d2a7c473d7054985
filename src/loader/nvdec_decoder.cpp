#include "loader/nvdec_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "decode/cuda_decode.hpp"
#include "decode/image_decoder.hpp"
#include "decode/video_decoder.hpp"
#include "gpu/cuda_runtime.hpp"
#include "gpu/nvml.hpp"
#include "gpu/yuv_tensor.hpp"
#include "loader/sample_decoder.hpp"
#include "mmprof/error.hpp"
#include "probe/clock.hpp"
#include "transform/normalize.hpp"
#include "util/digest.hpp"

namespace mmprof {
namespace {

std::string gpu_name() {
  try {
    const gpu::NvmlSnapshot s = gpu::nvml_snapshot();
    return fmt::format("{} (driver {})", s.gpus.at(0).name, s.driver_version);
  } catch (const UnavailableError&) {
    return "GPU 0";
  }
}

gpu::YuvPlanes planes_of(const DeviceFrame& f) {
  gpu::YuvPlanes p;
  p.width = f.width;
  p.height = f.height;
  p.nv12 = f.layout == DeviceLayout::nv12;
  for (int i = 0; i < 3; ++i) {
    p.planes[i] = f.planes[i];
    p.pitch[i] = f.pitch[i];
  }
  p.full_range = f.full_range;
  p.bt709 = f.bt709;
  return p;
}

class NvdecDecoder final : public DeviceDecoder {
 public:
  explicit NvdecDecoder(const Config& c)
      : config_(c),
        device_(gpu::runtime_context()),
        probe_(c.image.max_pixels, DecodeBudget(c.image.max_decode_ms, "image.max_decode_ms")),
        video_(1, c.video.max_pixels,
               {.reuse_decoder = c.video.reuse_decoder, .skip_nonref = c.video.skip_nonref},
               DecodeBudget(c.video.max_decode_ms, "video.max_decode_ms")),
        fallback_(c),
        name_(gpu_name()) {
    jpeg_.emplace(device_);
    video_.use_device(&device_);
    const Normalization norm;
    for (int i = 0; i < 3; ++i) {
      row_.mean[i] = norm.mean[i];
      row_.stddev[i] = norm.stddev[i];
    }
    row_.float32 = c.image.dtype == ImageDType::float32;
  }

  std::string describe() const override {
    return fmt::format("nvdec: FFmpeg's CUDA hwaccel on {}, JPEG through its MJPEG hwaccel", name_);
  }

  bool device_resident() const override { return true; }

  std::byte* rows_base(const SlotView& slot) override {
    // Two arenas in turn: the consumer's GPU work may still read the previous batch.
    const size_t bytes = slot.geometry().staging_offset();
    auto& arena = arenas_[next_arena_];
    next_arena_ ^= 1;
    if (!arena || arena->size() < bytes) arena.emplace(gpu::Memory::device, bytes);
    return static_cast<std::byte*>(arena->data());
  }

  void finish() override { gpu::finish_default_stream(); }

  int64_t fallbacks() const override { return fallbacks_; }
  std::string fallback_reason() const override { return fallback_reason_; }

  void decode(Modality modality, std::span<const uint8_t> bytes, uint64_t rng_key,
              SampleRecord& rec, std::byte* row) override {
    try {
      if (modality == Modality::video) {
        video(bytes, rng_key, rec, row);
      } else {
        image(bytes, rng_key, rec, row);
      }
    } catch (const DecodeError& e) {
      // NVDEC's failure (or a format it lacks: NotOnDevice) is not the sample's verdict: the CPU
      // decodes it, the row goes up to the device, and a bad sample fails there.
      if (fallbacks_++ == 0) fallback_reason_ = e.what();
      const bool clip = modality == Modality::video;
      const SlotGeometry g = geometry();
      const size_t n = clip ? g.video_bytes() : g.image_bytes();
      if (host_row_.size() < n) host_row_.resize(n);
      if (clip) {
        fallback_.video(bytes, rng_key, rec, host_row_.data());
      } else {
        fallback_.image(bytes, rng_key, rec, host_row_.data());
      }
      gpu::copy(row, host_row_.data(), n, gpu::Direction::to_device);
    }
  }

 private:
  SlotGeometry geometry() const { return slot_geometry(config_); }

  // One frame's crop (clamped to the frame NVDEC returned) into the row.
  void to_row(const DeviceFrame& f, CropRect crop, int size, std::byte* dst) {
    crop.x = std::clamp(crop.x, 0, f.width - 1);
    crop.y = std::clamp(crop.y, 0, f.height - 1);
    crop.w = std::clamp(crop.w, 1, f.width - crop.x);
    crop.h = std::clamp(crop.h, 1, f.height - crop.y);
    gpu::TensorRow row = row_;
    row.dst = dst;
    row.size = size;
    gpu::yuv_to_tensor(planes_of(f), crop.x, crop.y, crop.w, crop.h, row);
  }

  // A device-decoded sample's digest: its bytes, crop and flip (its pixels stay on the device).
  static uint64_t digest_of(std::span<const uint8_t> bytes, const CropRect& crop, uint8_t flip) {
    return digest_combine(digest64(bytes.data(), bytes.size(), flip), digest64(&crop, sizeof crop));
  }

  void image(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec, std::byte* dst) {
    const int64_t t = monotonic_ns();
    const ImageInfo info = probe_.probe(bytes);
    set_source(rec, info.format, info.width, info.height);
    const CropRect crop =
        draw_augmentation(config_.loader.seed, rng_key, info.width, info.height, rec).crop;
    if (info.format != "jpeg") throw NotOnDevice(info.format + " does not decode on the GPU");
    const DeviceFrame frame = jpeg_->decode(bytes);
    const int64_t t_decoded = monotonic_ns();
    rec.decode_ns = t_decoded - t;
    row_.flip = rec.flipped != 0;
    to_row(frame, crop, config_.image.size, dst);
    rec.augment_ns = monotonic_ns() - t_decoded;
    rec.digest = digest_of(bytes, crop, rec.flipped);
  }

  void video(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec, std::byte* dst) {
    const int64_t t = monotonic_ns();
    const int size = config_.video.size;
    const VideoInfo info = video_.open(bytes);
    set_source(rec, info.codec, info.width, info.height);
    Augmentation a = draw_augmentation(config_.loader.seed, rng_key, info.width, info.height, rec);
    const CropRect crop = a.crop;
    const auto mode = config_.video.sampling == VideoSampling::uniform
                          ? FrameSampling::uniform
                          : FrameSampling::random_window;
    sample_frame_times(info, config_.video.frames, mode, a.rng, times_);
    row_.flip = rec.flipped != 0;
    const size_t frame_out = 3 * static_cast<size_t>(size) * size * (row_.float32 ? 4 : 1);
    int64_t kernels_ns = 0;
    video_.decode_frames(times_, [&](const DeviceFrame& f, size_t i) {
      const int64_t k = monotonic_ns();
      // The CPU path's crop origin, snapped down onto the chroma grid (VideoDecoder::convert).
      CropRect snapped = crop;
      if (f.layout == DeviceLayout::nv12) {
        snapped.x &= ~1;
        snapped.y &= ~1;
      }
      to_row(f, snapped, size, dst + i * frame_out);
      kernels_ns += monotonic_ns() - k;
    });
    rec.augment_ns = kernels_ns;
    rec.decode_ns = monotonic_ns() - t - kernels_ns;
    rec.digest = digest_of(bytes, crop, rec.flipped);
  }

  const Config& config_;
  CudaDevice device_;
  std::optional<CudaJpegDecoder> jpeg_;
  ImageDecoder probe_;
  VideoDecoder video_;
  SampleDecoder fallback_;
  std::string name_;
  gpu::TensorRow row_;
  std::vector<double> times_;
  std::vector<std::byte> host_row_;
  std::optional<gpu::CudaBuffer> arenas_[2];
  int next_arena_ = 0;
  int64_t fallbacks_ = 0;
  std::string fallback_reason_;
};

}  // namespace

std::unique_ptr<DeviceDecoder> make_nvdec_decoder(const Config& config) {
  const std::string what = "decode.gpu_backend=nvdec (decode on the GPU)";
  gpu::require_gpu(what);
  try {
    gpu::require_kernels();
    return std::make_unique<NvdecDecoder>(config);
  } catch (const UnavailableError& e) {
    throw UnavailableError(what + " is unavailable: " + e.what());
  }
}

}  // namespace mmprof
