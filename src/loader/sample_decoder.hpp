#pragma once
// One sample's pixels, from its compressed bytes to its tensor row: decode, random resized crop,
// flip, resize, normalize (CHW, image.dtype). A worker's BatchFiller runs it on the CPU; the main
// process runs the same code when decode is placed there (decode.gpu_backend=emulated). It owns
// the decoders and every scratch buffer, so a warm one allocates nothing per sample.
#include <cstdint>
#include <span>
#include <vector>

#include "decode/image_decoder.hpp"
#include "decode/sws_resize.hpp"
#include "decode/video_decoder.hpp"
#include "loader/batch_slot.hpp"
#include "mmprof/config.hpp"
#include "transform/crop.hpp"
#include "transform/normalize.hpp"
#include "transform/resize.hpp"
#include "util/rng.hpp"

namespace mmprof {

// A sample's augmentation, drawn from (loader.seed, rng_key) whatever decodes it: its random
// resized crop of a width x height source and its flip (set in rec). `rng` goes on with the
// sample's later draws (a clip's frame times).
struct Augmentation {
  Rng rng;
  CropRect crop;
};
Augmentation draw_augmentation(uint64_t seed, uint64_t rng_key, int width, int height,
                               SampleRecord& rec);

class SampleDecoder {
 public:
  explicit SampleDecoder(const Config& config);

  // Decodes `bytes` and writes the augmented tensor to `dst`. The augmentation is drawn from
  // (loader.seed, rng_key), so any process decoding the same sample gives the same pixels. Sets
  // rec's source, flip, decode_ns and augment_ns, and rec.digest to the pixels' digest (before
  // the caption is combined in). Throws DecodeError for a bad sample; anything else it throws is
  // charged to augment.
  void image(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec, void* dst);
  void video(std::span<const uint8_t> bytes, uint64_t rng_key, SampleRecord& rec, void* dst);
  // Gives every scratch buffer back (loader.buffer_reuse=false).
  void release() noexcept;

 private:
  void finish_pixels(SampleRecord& rec, const uint8_t* hwc, int size, int frames, void* dst);

  const Config& config_;
  ImageDecoder image_decoder_;
  VideoDecoder video_decoder_;
  Resizer resizer_;
  SwsResizer sws_resizer_;  // image.resizer=swscale
  Normalization norm_;
  DType dtype_;
  DctScaling dct_scaling_;  // image.dct_scaling and image.dct_scales
  RgbImage decoded_;
  std::vector<uint8_t> hwc_;
  std::vector<double> frame_times_;
};

}  // namespace mmprof
