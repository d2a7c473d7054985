#pragma once
// The JPEG path of ImageDecoder: libjpeg-turbo's libjpeg API, with DCT-domain downscaling.
// The libjpeg API rather than TurboJPEG's, for what TurboJPEG 2.1 (Debian 12) cannot do:
//  - a progress monitor, called for every row of blocks of every scan: it stops a progressive
//    JPEG past kMaxJpegScans scans (what TurboJPEG's TJFLAG_LIMITSCANS and djpeg -maxscans do,
//    with their limit) and a decode past the sample's time budget (decode_budget.hpp);
//  - CMYK and YCCK JPEGs (Photoshop, print workflows), which TurboJPEG cannot convert to RGB:
//    they are decoded as CMYK and converted as PIL does (see cmyk_to_rgb).
// The only file that includes jpeglib.h is jpeg_decoder.cpp.
#include <cstdint>
#include <memory>
#include <span>

#include "decode/decode_budget.hpp"
#include "decode/image_decoder.hpp"

namespace mmprof::detail {

// libjpeg-turbo's own scan limit (TurboJPEG 2.1's TJFLAG_LIMITSCANS; tjbench and djpeg -maxscans
// in 3.0). A progressive JPEG from an encoder has about 10 scans (jpeg_simple_progression: 10 for
// YCbCr); thousands of scans are the denial-of-service pattern of libjpeg-turbo's report "Two
// Issues with the JPEG Standard", where each scan walks every block of the image again.
inline constexpr int kMaxJpegScans = 500;

// PIL's conversion of a JPEG's CMYK: it reads every CMYK JPEG as Adobe's inverted CMYK ("CMYK;I")
// and converts with its cmyk2rgb (R = 255 - K - C (255 - K) / 255 in its integer arithmetic).
// `cmyk`: the values libjpeg decodes, 4 per pixel; `rgb`: 3 per pixel.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, int pixels) noexcept;

class JpegDecoder {
 public:
  JpegDecoder(int64_t max_pixels, DecodeBudget budget);
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  ImageInfo probe(std::span<const uint8_t> bytes);
  void decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
              DctScaling scaling, DecodeRegion region, RgbImage& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mmprof::detail
