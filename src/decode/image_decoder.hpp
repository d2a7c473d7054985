#pragma once
// Image decoding: exactly the image formats of decode/media_format.cpp's table, sniffed from the
// bytes: JPEG through libjpeg-turbo (with DCT-domain downscaling; CMYK and YCCK included), the
// others (PNG, WebP, GIF, TIFF, BMP) through libavcodec; an animated image gives its first frame.
// One decoder per worker: it keeps its library handles and buffers, and is not thread-safe.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "decode/decode_budget.hpp"
#include "decode/pixel_limit.hpp"
#include "transform/crop.hpp"

namespace mmprof {

struct ImageInfo {
  int width = 0, height = 0;
  std::string format;  // "jpeg", "png", "webp", ...
};

// An RGB24 image whose buffer is reused between decodes.
struct RgbImage {
  int width = 0, height = 0;
  int scale_num = 1, scale_den = 1;  // the decode's scale relative to the source (DCT scaling)
  // The crop asked for, in this image's pixels: scaled with the decode, rounded out, and offset
  // when only the part of the image around it was decoded (the whole image when none was asked).
  CropRect crop;
  std::vector<uint8_t> pixels;  // width*height*3, grows only
};

// What of a JPEG to decode: the whole image, or only the rows and the columns of blocks that
// cover the crop (libjpeg-turbo's jpeg_skip_scanlines and jpeg_crop_scanline, as DALI's fused
// random-crop decoder). The rows outside are still entropy-decoded, so damage anywhere in the
// file fails the image either way.
enum class DecodeRegion { whole, crop };

// The libjpeg-turbo scaling factors DCT scaling may pick (image.dct_scaling, image.dct_scales).
// `halves`: 1/2, 1/4 and 1/8, whose reduced IDCTs libjpeg-turbo runs in SIMD, as PIL's draft
// mode. `eighths`: any n/8; libjpeg-turbo's IDCTs for 3/8 to 7/8 (and the 10x10 to 14x14 ones
// their chroma needs) are plain C, and at 5/8 to 7/8 a scaled decode takes longer than the whole
// one (tjbench, docs/performance.md).
enum class DctScaling : uint8_t { off, halves, eighths };

// A PNG without its zlib-compressed metadata chunks (zTXt, iTXt, iCCP): mmprof uses none of
// their text or ICC profile, and FFmpeg's PNG decoder inflates each whole, so a 1 MB zTXt that
// inflates to 1 GiB (a decompression bomb under image.max_bytes and image.max_pixels) cost 2 GiB
// and 15 s a decode. The other chunks are kept byte for byte (their CRCs stay valid). `png`
// itself when it has none; else a copy in `scratch` (reused). The chunk walk stops at a chunk
// that runs past the end, keeping the rest for the decoder to judge.
std::span<const uint8_t> png_without_compressed_metadata(std::span<const uint8_t> png,
                                                         std::vector<uint8_t>& scratch);

class ImageDecoder {
 public:
  // Images whose header claims more than max_pixels pixels are refused (DecodeError) before
  // anything is allocated for their pixels; a decode past `budget` fails (decode_budget.hpp).
  explicit ImageDecoder(int64_t max_pixels = kDefaultMaxPixels, DecodeBudget budget = {});
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Reads the header only (dimensions, format). Throws DecodeError on data no decoder accepts
  // and on images above the pixel limit.
  ImageInfo probe(std::span<const uint8_t> bytes);

  // Decodes to RGB24. With DCT scaling and a JPEG source, picks the smallest scaling factor of the
  // set whose scaled `crop` is still at least min_side pixels on both sides, so no detail the
  // target resolution needs is thrown away; out.scale_num/den record the factor. min_side <= 0 or
  // DctScaling::off decodes at full size. out.crop is `crop` in out's pixels; `region` applies
  // to JPEGs (the other formats are decoded whole).
  void decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
              DctScaling scaling, RgbImage& out, DecodeRegion region = DecodeRegion::whole);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof
