#include "decode/jpeg_decoder.hpp"

#include <turbojpeg.h>

#include <cstring>
#include <new>
#include <string>

#include "decode/decode_error.hpp"
#include "decode/pixel_limit.hpp"

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
    const bool enough =
        static_cast<int64_t>(cw) * f.num >= static_cast<int64_t>(min_side) * f.denom &&
        static_cast<int64_t>(ch) * f.num >= static_cast<int64_t>(min_side) * f.denom;
    if (enough && f.num * best.denom < best.num * f.denom) best = f;
  }
  return best;
}

// TurboJPEG returns -1 both for fatal errors and for libjpeg warnings (after which the buffer is
// filled anyway), and tjGetErrorCode() says TJERR_WARNING whenever any warning came first, even
// if a fatal error followed. Warnings mostly mean damaged data (truncation: "Premature end of JPEG
// file"; entropy-code damage: "Corrupt JPEG data: bad Huffman code"), decoded as grey or garbage
// blocks, so every message is a failure except these known-harmless ones, common in camera files.
// Only the first warning's text is kept by TurboJPEG, so a harmless one can mask a later one.
bool harmless_warning(const char* message) {
  static constexpr const char* kHarmless[] = {
      "extraneous bytes before marker",              // JWRN_EXTRANEOUS_DATA
      "Invalid SOS parameters for sequential JPEG",  // JWRN_NOT_SEQUENTIAL
      "Unknown Adobe color transform code",          // JWRN_ADOBE_XFORM
      "Corrupt JPEG data: bad ICC marker",           // JWRN_BOGUS_ICC: only the ICC profile
      "Warning: unknown JFIF revision number",       // JWRN_JFIF_MAJOR
  };
  for (const char* h : kHarmless) {
    if (std::strstr(message, h) != nullptr) return true;
  }
  return false;
}

}  // namespace

JpegDecoder::JpegDecoder(int64_t max_pixels)
    : handle_(tjInitDecompress()), max_pixels_(max_pixels) {
  if (handle_ == nullptr) throw std::bad_alloc();
}

JpegDecoder::~JpegDecoder() {
  tjDestroy(handle_);
}

// A handle that failed is replaced: libjpeg-turbo 2.1 keeps state from an aborted stream, and the
// same handle then reported a 0x0 "success" for the next header it read (found by fuzz_image_probe
// with one input read twice).
void JpegDecoder::fail(const char* what) {
  const std::string message = std::string(what) + ": " + tjGetErrorStr2(handle_);
  tjDestroy(handle_);
  handle_ = tjInitDecompress();
  if (handle_ == nullptr) throw std::bad_alloc();
  throw DecodeError(message);
}

void JpegDecoder::header(std::span<const uint8_t> bytes, int& width, int& height) {
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, bytes.data(), static_cast<unsigned long>(bytes.size()), &width,
                          &height, &subsamp, &colorspace) != 0) {
    fail("corrupt JPEG header");
  }
  if (width <= 0 || height <= 0) {
    throw DecodeError("corrupt JPEG header: " + std::to_string(width) + "x" +
                      std::to_string(height) + " pixels");
  }
  check_pixel_limit(width, height, max_pixels_, "JPEG image", "image.max_pixels");
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
  const tjscalingfactor f = dct_scaling && min_side > 0
                                ? choose_scale(width, height, crop, min_side)
                                : tjscalingfactor{1, 1};
  const int w = TJSCALED(width, f), h = TJSCALED(height, f);
  const size_t need = static_cast<size_t>(w) * h * 3;
  if (out.pixels.size() < need) out.pixels.resize(need);
  if (tjDecompress2(handle_, bytes.data(), static_cast<unsigned long>(bytes.size()),
                    out.pixels.data(), w, 0, h, TJPF_RGB, 0) != 0) {
    if (tjGetErrorCode(handle_) != TJERR_WARNING || !harmless_warning(tjGetErrorStr2(handle_))) {
      fail("corrupt JPEG data");
    }
  }
  out.width = w;
  out.height = h;
  out.scale_num = f.num;
  out.scale_den = f.denom;
}

}  // namespace mmprof::detail
