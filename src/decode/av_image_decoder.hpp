#pragma once
// The non-JPEG path of ImageDecoder: libavcodec's image decoders (PNG, WebP, BMP, GIF, TIFF, ...;
// the codec of each format is media_format.cpp's ffmpeg_codec column), converted to RGB24 with
// swscale. FFmpeg types stay in av_image_decoder.cpp.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "decode/image_decoder.hpp"
#include "decode/webp_frame.hpp"

namespace mmprof::detail {

class AvImageDecoder {
 public:
  // FFmpeg refuses frames above max_pixels (AVCodecContext.max_pixels) before allocating them.
  explicit AvImageDecoder(int64_t max_pixels);
  ~AvImageDecoder();
  AvImageDecoder(const AvImageDecoder&) = delete;
  AvImageDecoder& operator=(const AvImageDecoder&) = delete;

  // Decodes `bytes` as `format` (a name of decode/media_format.hpp's table with an ffmpeg_codec:
  // "png", "webp", "bmp", "gif", "tiff", "jpeg") at full size. An animated image gives its first
  // frame, as PIL does: GIF and APNG by FFmpeg's decoders (one packet holds the file; they decode
  // its first image), animated WebP through webp_frame.hpp.
  void decode(std::span<const uint8_t> bytes, std::string_view format, RgbImage& out);

  // Whether decode() can read `format`: the table gives it a codec this FFmpeg has a decoder for.
  static bool has_decoder(std::string_view format);

 private:
  void decode_still(std::span<const uint8_t> bytes, std::string_view format, RgbImage& out);
  void decode_on_canvas(const WebpFrame& frame, RgbImage& out);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof::detail
