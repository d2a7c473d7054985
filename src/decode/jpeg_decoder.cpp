#include "decode/jpeg_decoder.hpp"

#include <turbojpeg.h>

#include <cstring>
#include <new>
#include <string>

#include "decode/decode_error.hpp"

namespace mmprof::detail {
namespace {

// The smallest libjpeg-turbo scaling factor (<= 1) that keeps the crop at least min_side pixels
// on both sides in exact arithmetic, so the rounded-out crop of scale_crop() is never smaller.
tjscalingfactor choose_scale(int width, int height, const CropRect& crop, int min_side) {
  const int cw = crop.w > 0 ? crop.w : width, ch = crop.h > 0 ? crop.h : height;
  int n = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&n);
  tjscalingfactor best{1, 1};
  for (int i = 0; factors != nullptr && i < n; ++i) {
    const tjscalingfactor f = factors[i];
    if (f.num > f.denom) continue;
    const bool enough = static_cast<int64_t>(cw) * f.num >= static_cast<int64_t>(min_side) * f.denom &&
                        static_cast<int64_t>(ch) * f.num >= static_cast<int64_t>(min_side) * f.denom;
    if (enough && f.num * best.denom < best.num * f.denom) best = f;
  }
  return best;
}

// TurboJPEG reports recoverable libjpeg warnings (TJERR_WARNING) and still fills the buffer. A
// truncated file ("Premature end of JPEG file") or damaged entropy-coded data ("Corrupt JPEG data:
// bad Huffman code", "... premature end of data segment") yields grey or garbage blocks, so those
// count as failures; "extraneous bytes before marker" is common in camera files and harmless.
bool warning_is_fatal(const char* message) {
  if (std::strstr(message, "Premature end") != nullptr) return true;
  return std::strstr(message, "Corrupt JPEG data") != nullptr &&
         std::strstr(message, "extraneous bytes") == nullptr;
}

}  // namespace

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr) throw std::bad_alloc();
}

JpegDecoder::~JpegDecoder() { tjDestroy(handle_); }

void JpegDecoder::fail(const char* what) {
  throw DecodeError(std::string(what) + ": " + tjGetErrorStr2(handle_));
}

void JpegDecoder::header(std::span<const uint8_t> bytes, int& width, int& height) {
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, bytes.data(), static_cast<unsigned long>(bytes.size()), &width,
                          &height, &subsamp, &colorspace) != 0) {
    fail("corrupt JPEG header");
  }
}

ImageInfo JpegDecoder::probe(std::span<const uint8_t> bytes) {
  ImageInfo info;
  header(bytes, info.width, info.height);
  info.format = "jpeg";
  return info;
}

void JpegDecoder::decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
                         bool dct_scaling, RgbImage& out) {
  int width = 0, height = 0;
  header(bytes, width, height);
  const tjscalingfactor f =
      dct_scaling && min_side > 0 ? choose_scale(width, height, crop, min_side) : tjscalingfactor{1, 1};
  const int w = TJSCALED(width, f), h = TJSCALED(height, f);
  const size_t need = static_cast<size_t>(w) * h * 3;
  if (out.pixels.size() < need) out.pixels.resize(need);
  if (tjDecompress2(handle_, bytes.data(), static_cast<unsigned long>(bytes.size()),
                    out.pixels.data(), w, 0, h, TJPF_RGB, 0) != 0) {
    if (tjGetErrorCode(handle_) != TJERR_WARNING || warning_is_fatal(tjGetErrorStr2(handle_))) {
      fail("corrupt JPEG data");
    }
  }
  out.width = w;
  out.height = h;
  out.scale_num = f.num;
  out.scale_den = f.denom;
}

}  // namespace mmprof::detail
