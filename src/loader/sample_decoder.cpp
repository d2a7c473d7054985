#include "loader/sample_decoder.hpp"

#include "probe/clock.hpp"
#include "util/digest.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

// Grow-only buffers: a warm decoder works in memory that is already faulted in.
uint8_t* grow(std::vector<uint8_t>& buffer, size_t size) {
  if (buffer.size() < size) buffer.resize(size);
  return buffer.data();
}

}  // namespace

Augmentation draw_augmentation(uint64_t seed, uint64_t rng_key, int width, int height,
                               SampleRecord& rec) {
  Augmentation a{Rng::for_item(seed, kStreamAugment, rng_key), {}};
  a.crop = random_resized_crop(a.rng, width, height);
  rec.flipped = a.rng.uniform() < 0.5 ? 1 : 0;
  return a;
}

SampleDecoder::SampleDecoder(const Config& config)
    : config_(config),
      image_decoder_(config.image.max_pixels,
                     DecodeBudget(config.image.max_decode_ms, "image.max_decode_ms")),
      video_decoder_(
          config.video.decoder_threads, config.video.max_pixels,
          {.reuse_decoder = config.video.reuse_decoder, .skip_nonref = config.video.skip_nonref},
          DecodeBudget(config.video.max_decode_ms, "video.max_decode_ms")),
      resizer_(config.image.simd),
      dtype_(config.image.dtype == ImageDType::uint8 ? DType::uint8 : DType::float32),
      dct_scaling_(!config.image.dct_scaling                            ? DctScaling::off
                   : config.image.dct_scales == ImageDctScales::eighths ? DctScaling::eighths
                                                                        : DctScaling::halves) {}

// malloc would hand the freed blocks straight back, already faulted in; the caller's
// malloc_trim returns the free pages to the kernel.
void SampleDecoder::release() noexcept {
  for (auto* buffer : {&hwc_, &decoded_.pixels})
    std::vector<uint8_t>().swap(*buffer);
  resizer_.release();
  sws_resizer_.release();
}

void SampleDecoder::finish_pixels(SampleRecord& rec, const uint8_t* hwc, int size, int frames,
                                  void* dst) {
  const size_t frame_hwc = 3 * static_cast<size_t>(size) * static_cast<size_t>(size);
  const size_t frame_out = frame_hwc * (dtype_ == DType::uint8 ? 1 : 4);
  for (int f = 0; f < frames; ++f) {
    to_chw(hwc + static_cast<size_t>(f) * frame_hwc, size, size, rec.flipped != 0, dtype_, norm_,
           static_cast<std::byte*>(dst) + static_cast<size_t>(f) * frame_out);
  }
  // The digest covers what determines the tensor: the augmented pixels and the flip.
  rec.digest = digest64(hwc, frame_hwc * static_cast<size_t>(frames), rec.flipped);
}

void SampleDecoder::image(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec,
                          void* dst) {
  const int size = config_.image.size;
  const int64_t t = monotonic_ns();
  const ImageInfo info = image_decoder_.probe(bytes);
  set_source(rec, info.format, info.width, info.height);
  const CropRect crop =
      draw_augmentation(config_.loader.seed, rng_key, info.width, info.height, rec).crop;
  if (config_.image.resizer == ImageResizer::swscale) {
    decoded_.pixels.reserve(3 * static_cast<size_t>(info.width) * info.height + SwsResizer::kSlack);
  }
  image_decoder_.decode(bytes, crop, size, dct_scaling_, decoded_,
                        config_.image.crop_decode ? DecodeRegion::crop : DecodeRegion::whole);
  const int64_t t_decoded = monotonic_ns();
  rec.decode_ns = t_decoded - t;
  const CropRect& scaled = decoded_.crop;  // the crop in the decoded pixels
  uint8_t* hwc = grow(hwc_, 3 * static_cast<size_t>(size) * size);
  if (config_.image.resizer == ImageResizer::swscale) {
    sws_resizer_.resize(decoded_.pixels.data(), decoded_.width * 3, scaled, hwc, size, size);
  } else {
    resizer_.resize(decoded_.pixels.data(), decoded_.width * 3, scaled, hwc, size, size);
  }
  finish_pixels(rec, hwc, size, 1, dst);
  rec.augment_ns = monotonic_ns() - t_decoded;
}

void SampleDecoder::video(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec,
                          void* dst) {
  const int size = config_.video.size;
  const int frames = config_.video.frames;
  const int64_t t = monotonic_ns();
  const VideoInfo info = video_decoder_.open(bytes);
  set_source(rec, info.codec, info.width, info.height);
  // One draw of randomness for all frames of a clip: the same crop and flip on every frame.
  Augmentation a = draw_augmentation(config_.loader.seed, rng_key, info.width, info.height, rec);
  const auto mode = config_.video.sampling == VideoSampling::uniform ? FrameSampling::uniform
                                                                     : FrameSampling::random_window;
  sample_frame_times(info, frames, mode, a.rng, frame_times_);
  // The crop and resize happen inside the decoder's colour conversion (one swscale pass), so
  // for video they count as decode; augment is flip + normalize.
  video_decoder_.decode_frames(frame_times_, a.crop, size, size,
                               grow(hwc_, 3 * static_cast<size_t>(frames) * size * size));
  const int64_t t_decoded = monotonic_ns();
  rec.decode_ns = t_decoded - t;
  finish_pixels(rec, hwc_.data(), size, frames, dst);
  rec.augment_ns = monotonic_ns() - t_decoded;
}

}  // namespace mmprof
