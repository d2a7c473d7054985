#pragma once
// Image encoders for the generator: JPEG through libturbojpeg, PNG through libavcodec. Outputs go
// into caller-owned vectors so their capacity is reused from sample to sample.
#include <cstdint>
#include <memory>
#include <vector>

#include "gen/image_synth.hpp"

namespace mmprof::gen {

class JpegEncoder {
 public:
  JpegEncoder();  // throws RunError if libturbojpeg cannot start
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // Baseline JPEG, 4:2:0 chroma subsampling (what cameras and the web mostly ship).
  void encode(const RgbImage& image, int quality, std::vector<uint8_t>& out);

 private:
  struct HandleDeleter {
    void operator()(void* handle) const noexcept;
  };
  std::unique_ptr<void, HandleDeleter> handle_;
};

// PNG (RGB24, default zlib level) through libavcodec's png encoder.
void encode_png(const RgbImage& image, std::vector<uint8_t>& out);

}  // namespace mmprof::gen
