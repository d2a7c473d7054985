#pragma once
// The JPEG path of ImageDecoder: libjpeg-turbo's TurboJPEG API, with DCT-domain downscaling.
// The only file that includes turbojpeg.h is jpeg_decoder.cpp.
#include <cstdint>
#include <span>

#include "decode/image_decoder.hpp"

namespace mmprof::detail {

class JpegDecoder {
 public:
  explicit JpegDecoder(int64_t max_pixels);
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  ImageInfo probe(std::span<const uint8_t> bytes);
  void decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side, bool dct_scaling,
              RgbImage& out);

 private:
  void header(std::span<const uint8_t> bytes, int& width, int& height);
  [[noreturn]] void fail(const char* what);
  void* handle_;  // tjhandle
  int64_t max_pixels_;
};

}  // namespace mmprof::detail
