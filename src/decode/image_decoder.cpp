#include "decode/image_decoder.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "decode/av_image_decoder.hpp"
#include "decode/decode_error.hpp"
#include "decode/jpeg_decoder.hpp"
#include "decode/media_format.hpp"

namespace mmprof {
namespace {

bool starts_with(std::span<const uint8_t> bytes, size_t at, std::string_view magic) {
  return bytes.size() >= at + magic.size() &&
         std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
}

[[noreturn]] void not_an_image(std::span<const uint8_t> bytes) {
  if (bytes.empty()) throw DecodeError("empty image data (0 bytes)");
  std::string hex;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, i == 0 ? "%02X" : " %02X", bytes[i]);
    hex += byte;
  }
  throw DecodeError("not a " + listed_formats(Modality::image, "/") + " image (first bytes " + hex +
                    ")");
}

// The image format from its magic number (media_format.cpp's signatures), never from a file
// name: a PNG saved as .jpg decodes as PNG. Data no image row claims is not an image, whatever
// else FFmpeg could read (EXR, JPEG XL, PGM, ...): mmprof reads exactly the formats of its table.
const MediaFormat& sniff(std::span<const uint8_t> bytes) {
  const MediaFormat* format = sniff_format(bytes);
  if (format == nullptr || format->modality != Modality::image) not_an_image(bytes);
  return *format;
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

// Where the chunk at `at` ends (12 bytes of length, type and CRC around its data), or npos when it
// runs past the end of `png`.
size_t chunk_end(std::span<const uint8_t> png, size_t at) {
  if (at + 12 > png.size()) return std::string_view::npos;
  const uint64_t end = at + 12 + uint64_t{big_endian32(png.data() + at)};
  return end <= png.size() ? static_cast<size_t>(end) : std::string_view::npos;
}

bool compressed_metadata(std::span<const uint8_t> png, size_t at) {
  return starts_with(png, at + 4, "zTXt") || starts_with(png, at + 4, "iTXt") ||
         starts_with(png, at + 4, "iCCP");
}

}  // namespace

std::span<const uint8_t> png_without_compressed_metadata(std::span<const uint8_t> png,
                                                         std::vector<uint8_t>& scratch) {
  constexpr size_t kSignature = 8;
  bool found = false;
  for (size_t at = kSignature, end; !found && (end = chunk_end(png, at)) != std::string_view::npos;
       at = end)
    found = compressed_metadata(png, at);
  if (!found) return png;
  scratch.assign(png.begin(), png.begin() + kSignature);
  size_t at = kSignature;
  for (size_t end; (end = chunk_end(png, at)) != std::string_view::npos; at = end) {
    if (!compressed_metadata(png, at))
      scratch.insert(scratch.end(), png.begin() + at, png.begin() + end);
  }
  scratch.insert(scratch.end(), png.begin() + at, png.end());  // what the walk could not read
  return scratch;
}

struct ImageDecoder::Impl {
  Impl(int64_t limit, DecodeBudget budget) : max_pixels(limit), jpeg(limit, budget), av(limit) {}
  int64_t max_pixels;
  detail::JpegDecoder jpeg;
  detail::AvImageDecoder av;
  RgbImage scratch;          // probe() of formats whose header we do not parse
  std::vector<uint8_t> png;  // a PNG without its compressed metadata, when it had some
};

ImageDecoder::ImageDecoder(int64_t max_pixels, DecodeBudget budget)
    : impl_(std::make_unique<Impl>(max_pixels, budget)) {}
ImageDecoder::~ImageDecoder() = default;

ImageInfo ImageDecoder::probe(std::span<const uint8_t> bytes) {
  const MediaFormat& format = sniff(bytes);
  if (format.backend == DecodeBackend::libjpeg_turbo) return impl_->jpeg.probe(bytes);
  if (format.name == "png") return png_header(bytes, impl_->max_pixels);
  // Other formats are rare in training data: a full decode is the simplest exact header read.
  impl_->av.decode(bytes, format.name, impl_->scratch);
  return {impl_->scratch.width, impl_->scratch.height, std::string(format.name)};
}

void ImageDecoder::decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
                          DctScaling scaling, RgbImage& out, DecodeRegion region) {
  const MediaFormat& format = sniff(bytes);
  if (format.backend == DecodeBackend::libjpeg_turbo) {
    impl_->jpeg.decode(bytes, crop, min_side, scaling, region, out);
  } else {
    // PNG: refused above the pixel limit before FFmpeg allocates anything, and given to it
    // without the metadata it would inflate.
    if (format.name == "png") {
      png_header(bytes, impl_->max_pixels);
      bytes = png_without_compressed_metadata(bytes, impl_->png);
    }
    impl_->av.decode(bytes, format.name, out);
    out.crop = crop_in(crop, 1, 1, out.width, out.height);
  }
}

}  // namespace mmprof
