#include "decode/image_decoder.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "decode/av_image_decoder.hpp"
#include "decode/decode_error.hpp"
#include "decode/jpeg_decoder.hpp"

namespace mmprof {
namespace {

bool starts_with(std::span<const uint8_t> bytes, size_t at, std::string_view magic) {
  return bytes.size() >= at + magic.size() &&
         std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
}

// The format from its magic number, never from a file name: a PNG saved as .jpg decodes as PNG.
// "" when no signature matches (libavformat's probe gets a chance after that).
std::string_view sniff(std::span<const uint8_t> b) {
  if (starts_with(b, 0, "\xFF\xD8\xFF")) return "jpeg";
  if (starts_with(b, 0, "\x89PNG\r\n\x1A\n")) return "png";
  if (starts_with(b, 0, "RIFF") && starts_with(b, 8, "WEBP")) return "webp";
  if (starts_with(b, 0, "GIF87a") || starts_with(b, 0, "GIF89a")) return "gif";
  if (starts_with(b, 0, std::string_view("II*\0", 4)) ||
      starts_with(b, 0, std::string_view("MM\0*", 4))) {
    return "tiff";
  }
  if (starts_with(b, 0, "BM") && b.size() >= 26) return "bmp";
  return "";
}

[[noreturn]] void not_an_image(std::span<const uint8_t> bytes) {
  if (bytes.empty()) throw DecodeError("empty image data (0 bytes)");
  std::string hex;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, i == 0 ? "%02X" : " %02X", bytes[i]);
    hex += byte;
  }
  throw DecodeError("not a JPEG/PNG/WebP/GIF/TIFF/BMP image (first bytes " + hex + ")");
}

uint32_t big_endian32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

// The PNG signature is followed by the IHDR chunk: length, "IHDR", width, height (big-endian).
ImageInfo png_header(std::span<const uint8_t> b, int64_t max_pixels) {
  if (!starts_with(b, 12, "IHDR") || b.size() < 24) throw DecodeError("corrupt PNG header");
  const uint32_t w = big_endian32(b.data() + 16), h = big_endian32(b.data() + 20);
  if (w == 0 || h == 0 || w > INT32_MAX || h > INT32_MAX) {
    throw DecodeError("corrupt PNG header (size " + std::to_string(w) + "x" + std::to_string(h) +
                      ")");
  }
  check_pixel_limit(w, h, max_pixels, "PNG image", "image.max_pixels");
  return {static_cast<int>(w), static_cast<int>(h), "png"};
}

}  // namespace

struct ImageDecoder::Impl {
  explicit Impl(int64_t limit) : max_pixels(limit), jpeg(limit), av(limit) {}
  int64_t max_pixels;
  detail::JpegDecoder jpeg;
  detail::AvImageDecoder av;
  RgbImage scratch;  // probe() of formats whose header we do not parse
};

ImageDecoder::ImageDecoder(int64_t max_pixels) : impl_(std::make_unique<Impl>(max_pixels)) {}
ImageDecoder::~ImageDecoder() = default;

ImageInfo ImageDecoder::probe(std::span<const uint8_t> bytes) {
  const std::string_view format = sniff(bytes);
  if (format == "jpeg") return impl_->jpeg.probe(bytes);
  if (format == "png") return png_header(bytes, impl_->max_pixels);
  // Other formats are rare in training data: a full decode is the simplest exact header read.
  std::string name(format);
  if (format.empty()) {
    name = impl_->av.decode_probed(bytes, impl_->scratch);
    if (name.empty()) not_an_image(bytes);
  } else {
    impl_->av.decode(bytes, format, impl_->scratch);
  }
  return {impl_->scratch.width, impl_->scratch.height, name};
}

void ImageDecoder::decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
                          bool dct_scaling, RgbImage& out) {
  const std::string_view format = sniff(bytes);
  if (format == "jpeg") {
    impl_->jpeg.decode(bytes, crop, min_side, dct_scaling, out);
  } else if (format == "png") {
    png_header(bytes, impl_->max_pixels);  // refused before FFmpeg allocates anything
    impl_->av.decode(bytes, format, out);
  } else if (!format.empty()) {
    impl_->av.decode(bytes, format, out);
  } else if (impl_->av.decode_probed(bytes, out).empty()) {
    not_an_image(bytes);
  }
}

}  // namespace mmprof
