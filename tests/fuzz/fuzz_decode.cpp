// libFuzzer target: the whole decode path of a loader worker, on images and videos alike: the
// format from the magic bytes, then for an image its probe, torchvision's random-resized-crop
// geometry, the DCT-scaled decode (whole or of the crop's part) and the PIL-equivalent resize
// into a 32x32 tensor; for a clip its open, frame sampling and the cropped, scaled decode of 4
// frames (BatchFiller's process_image and process_video, without the slot).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "decode/decode_budget.hpp"
#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"
#include "decode/media_format.hpp"
#include "decode/video_decoder.hpp"
#include "transform/crop.hpp"
#include "transform/resize.hpp"
#include "util/rng.hpp"

namespace {

constexpr int kSize = 32, kFrames = 4;

void image(std::span<const uint8_t> bytes, mmprof::Rng& rng) {
  // Small limits keep each input's memory and time bounded, as image.max_pixels and
  // image.max_decode_ms do in a run.
  static mmprof::ImageDecoder decoder(1 << 22, mmprof::DecodeBudget(2000, "image.max_decode_ms"));
  static mmprof::RgbImage decoded;
  static mmprof::Resizer resizer;
  static std::vector<uint8_t> out(3 * kSize * kSize);
  const mmprof::ImageInfo info = decoder.probe(bytes);
  const mmprof::CropRect crop = mmprof::random_resized_crop(rng, info.width, info.height);
  // The whole image or only the part around the crop, as image.crop_decode chooses.
  const auto region =
      rng.uniform() < 0.5 ? mmprof::DecodeRegion::crop : mmprof::DecodeRegion::whole;
  // Any n/8 (image.dct_scales=eighths) covers every IDCT size the default's halves use and more.
  decoder.decode(bytes, crop, kSize, mmprof::DctScaling::eighths, decoded, region);
  const mmprof::CropRect& c = decoded.crop;
  if (decoded.width <= 0 || decoded.height <= 0 ||
      decoded.pixels.size() < 3ull * decoded.width * decoded.height || c.x < 0 || c.y < 0 ||
      c.w <= 0 || c.h <= 0 || c.x + c.w > decoded.width || c.y + c.h > decoded.height) {
    __builtin_trap();  // a decode that succeeds describes a real picture and its crop inside it
  }
  resizer.resize(decoded.pixels.data(), decoded.width * 3, c, out.data(), kSize, kSize);
}

void video(std::span<const uint8_t> bytes, mmprof::Rng& rng) {
  static mmprof::VideoDecoder decoder(1, 1 << 20, {},
                                      mmprof::DecodeBudget(5000, "video.max_decode_ms"));
  static std::vector<double> times;
  static std::vector<uint8_t> out(3ull * kFrames * kSize * kSize);
  try {
    const mmprof::VideoInfo info = decoder.open(bytes);
    const mmprof::CropRect crop = mmprof::random_resized_crop(rng, info.width, info.height);
    mmprof::sample_frame_times(info, kFrames, mmprof::FrameSampling::uniform, rng, times);
    decoder.decode_frames(times, crop, kSize, kSize, out.data());
  } catch (...) {
    decoder.close();
    throw;
  }
  decoder.close();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  mmprof::Rng rng = mmprof::Rng::for_item(0, mmprof::kStreamAugment, size);
  const mmprof::MediaFormat* format = mmprof::sniff_format(bytes);
  try {
    if (format != nullptr && format->modality == mmprof::Modality::image) {
      image(bytes, rng);
    } else {
      video(bytes, rng);
    }
  } catch (const mmprof::DecodeError&) {
  }
  return 0;
}
