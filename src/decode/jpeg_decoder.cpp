#include "decode/jpeg_decoder.hpp"

// jpeglib.h needs FILE and size_t declared first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "decode/decode_error.hpp"
#include "decode/pixel_limit.hpp"

namespace mmprof::detail {
namespace {

struct Scale {
  int num = 1, denom = 1;
};

// The smallest libjpeg-turbo scaling factor n/8 (< 1) of the set that keeps the crop at least
// min_side pixels on both sides in exact arithmetic, so the rounded-out crop of scale_crop() is
// never smaller. Reduced (4/8 is 1/2): the output size is the same, ceil(side x n / 8).
Scale choose_scale(int width, int height, const CropRect& crop, int min_side, DctScaling set) {
  const int64_t cw = crop.w > 0 ? crop.w : width, ch = crop.h > 0 ? crop.h : height;
  for (int n = 1; n < 8; n = set == DctScaling::halves ? 2 * n : n + 1) {
    if (cw * n >= int64_t{min_side} * 8 && ch * n >= int64_t{min_side} * 8) {
      const int g = std::gcd(n, 8);
      return {n / g, 8 / g};
    }
  }
  return {};
}

// libjpeg warnings mostly mean damaged data (truncation: "Premature end of JPEG file";
// entropy-code damage: "Corrupt JPEG data: bad Huffman code"), decoded as grey or garbage blocks,
// so every warning fails the image except these harmless ones, common in camera files.
bool harmless_warning(int code) {
  switch (code) {
    case JWRN_EXTRANEOUS_DATA:  // extraneous bytes before marker
    case JWRN_NOT_SEQUENTIAL:   // invalid SOS parameters for sequential JPEG
    case JWRN_ADOBE_XFORM:      // unknown Adobe color transform code
    case JWRN_BOGUS_ICC:        // a bad ICC marker: only the colour profile
    case JWRN_JFIF_MAJOR:       // unknown JFIF revision number
      return true;
    default:
      return false;
  }
}

// libjpeg's error manager: errors, and warnings that mean damage, longjmp back to the call that
// started the step (guarded()), with the message kept.
struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg hands &pub back as cinfo->err
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool over_budget;
};

struct Progress {
  jpeg_progress_mgr pub;  // first: libjpeg hands &pub back as cinfo->progress
  const DecodeBudget* budget;
};

ErrorManager& error_manager(j_common_ptr cinfo) {
  return *reinterpret_cast<ErrorManager*>(cinfo->err);
}

[[noreturn]] void on_error(j_common_ptr cinfo) {
  ErrorManager& err = error_manager(cinfo);
  (*cinfo->err->format_message)(cinfo, err.message);
  std::longjmp(err.jump, 1);
}

// A warning that means damage fails the image, so the decode stops there (TurboJPEG's
// TJFLAG_STOPONWARNING) rather than finishing an image that is refused anyway: a stream of
// thousands of repeated scans warns "Inconsistent progression sequence" at its second.
void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace output
  cinfo->err->num_warnings++;
  if (harmless_warning(cinfo->err->msg_code)) return;
  ErrorManager& err = error_manager(cinfo);
  (*cinfo->err->format_message)(cinfo, err.message);
  std::longjmp(err.jump, 1);
}

// Called for every row of blocks as scans are read and as rows are output.
void on_progress(j_common_ptr cinfo) {
  ErrorManager& err = error_manager(cinfo);
  const int scans = reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number;
  if (scans > kMaxJpegScans) {
    std::snprintf(err.message, sizeof err.message,
                  "progressive JPEG with more than %d scans, libjpeg-turbo's limit against "
                  "decodes that walk the whole image once per scan",
                  kMaxJpegScans);
    std::longjmp(err.jump, 1);
  }
  if (reinterpret_cast<Progress*>(cinfo->progress)->budget->expired()) {
    err.over_budget = true;
    std::longjmp(err.jump, 1);
  }
}

// Runs one step of libjpeg calls: false when libjpeg failed (ErrorManager::message). `step` must
// own nothing with a destructor: a failure longjmps out of it.
template <typename Step>
bool guarded(ErrorManager& err, Step&& step) {
  if (setjmp(err.jump) != 0) return false;
  step();
  return true;
}

int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

}  // namespace

void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, int pixels) noexcept {
  for (int i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    // "CMYK;I": C = 255 - stored; then cmyk2rgb: nk = 255 - K, out = nk - C * nk / 255.
    const int nk = cmyk[3];
    for (int c = 0; c < 3; ++c)
      rgb[c] = static_cast<uint8_t>(std::clamp(nk - muldiv255(255 - cmyk[c], nk), 0, 255));
  }
}

struct JpegDecoder::State {
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  Progress progress{};
  DecodeBudget budget;
  int64_t max_pixels;
  std::vector<uint8_t> row_buffer;  // a CMYK row before its conversion, or a spare row; grows only

  State(int64_t limit, DecodeBudget b) : budget(b), max_pixels(limit) {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    if (!guarded(err, [&] { jpeg_create_decompress(&cinfo); })) throw std::bad_alloc();
    progress.pub.progress_monitor = on_progress;
    progress.budget = &budget;
    cinfo.progress = &progress.pub;  // after create, which zeroes the struct
  }
  ~State() { jpeg_destroy_decompress(&cinfo); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  [[noreturn]] void fail(const char* what, const char* text) const {
    if (err.over_budget) throw DecodeError(budget.message());
    throw DecodeError(std::string(what) + ": " + text);
  }

  void read_header(std::span<const uint8_t> bytes) {
    err.over_budget = false;
    const bool ok = guarded(err, [&] {
      jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
      jpeg_read_header(&cinfo, TRUE);
    });
    if (!ok) fail("corrupt JPEG header", err.message);
    check_pixel_limit(cinfo.image_width, cinfo.image_height, max_pixels, "JPEG image",
                      "image.max_pixels");
  }

  void decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
              DctScaling scaling, DecodeRegion region, RgbImage& out) {
    budget.start();
    read_header(bytes);
    const int width = static_cast<int>(cinfo.image_width);
    const int height = static_cast<int>(cinfo.image_height);
    const Scale f = scaling != DctScaling::off && min_side > 0
                        ? choose_scale(width, height, crop, min_side, scaling)
                        : Scale{};
    const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGB;
    cinfo.scale_num = static_cast<unsigned>(f.num);
    cinfo.scale_denom = static_cast<unsigned>(f.denom);
    if (!guarded(err, [&] { jpeg_start_decompress(&cinfo); })) {
      fail("corrupt JPEG data", err.message);
    }
    const auto scaled_w = static_cast<int>(cinfo.output_width);
    const auto scaled_h = static_cast<int>(cinfo.output_height);
    const CropRect want = crop_in(crop, f.num, f.denom, scaled_w, scaled_h);
    const CropRect part = region == DecodeRegion::crop ? decode_part(want) : CropRect{};
    const int w = part.w > 0 ? part.w : scaled_w, h = part.w > 0 ? part.h : scaled_h;
    const size_t row = static_cast<size_t>(w) * 3;
    if (out.pixels.size() < row * h) out.pixels.resize(row * h);
    // One spare row: where the last row of a partial decode goes (read only to be checked).
    if (row_buffer.size() < static_cast<size_t>(w) * 4)
      row_buffer.resize(static_cast<size_t>(w) * 4);
    uint8_t* const pixels = out.pixels.data();
    uint8_t* const spare = row_buffer.data();
    const auto first = static_cast<JDIMENSION>(part.y), end = static_cast<JDIMENSION>(part.y + h);
    const bool ok = guarded(err, [&] {
      if (first > 0) jpeg_skip_scanlines(&cinfo, first);
      while (cinfo.output_scanline < end) {
        uint8_t* dst = pixels + (cinfo.output_scanline - first) * row;
        if (cmyk) {
          JSAMPROW line = spare;
          jpeg_read_scanlines(&cinfo, &line, 1);
          cmyk_to_rgb(spare, dst, w);
          continue;
        }
        JSAMPROW lines[16];
        const JDIMENSION n = std::min<JDIMENSION>(16, end - cinfo.output_scanline);
        for (JDIMENSION i = 0; i < n; ++i)
          lines[i] = dst + i * row;
        jpeg_read_scanlines(&cinfo, lines, n);
      }
      // The rows below the crop: skipped (entropy-decoded only) up to the last, which is read,
      // since a skip to the end would not decode, and so not check, the rest of the file.
      const JDIMENSION below = cinfo.output_height - cinfo.output_scanline;
      if (below > 1) jpeg_skip_scanlines(&cinfo, below - 1);
      if (below > 0) {
        JSAMPROW line = spare;
        jpeg_read_scanlines(&cinfo, &line, 1);
      }
      jpeg_finish_decompress(&cinfo);
    });
    if (!ok) fail("corrupt JPEG data", err.message);
    out.width = w;
    out.height = h;
    out.scale_num = f.num;
    out.scale_den = f.denom;
    out.crop = {want.x - part.x, want.y - part.y, want.w, want.h};
  }

  // Restricts the decode to the rows of `want` and the columns of blocks around it; returns the
  // part of the scaled image that will be decoded. One pixel more on each side than `want`
  // before libjpeg-turbo widens it to whole blocks: its fancy upsampling of chroma replicates the
  // edge of a partial row, so the part's outermost columns may differ from a whole decode's.
  CropRect decode_part(const CropRect& want) {
    auto x = static_cast<JDIMENSION>(std::max(want.x - 1, 0));
    auto w = static_cast<JDIMENSION>(
        std::min(want.x + want.w + 1, static_cast<int>(cinfo.output_width)) - static_cast<int>(x));
    if (!guarded(err, [&] { jpeg_crop_scanline(&cinfo, &x, &w); })) {
      fail("corrupt JPEG data", err.message);
    }
    return {static_cast<int>(x), want.y, static_cast<int>(w), want.h};
  }
};

JpegDecoder::JpegDecoder(int64_t max_pixels, DecodeBudget budget)
    : state_(std::make_unique<State>(max_pixels, budget)) {}

JpegDecoder::~JpegDecoder() = default;

// Every call ends with jpeg_abort_decompress, whatever happened, so the next image starts from a
// clean decompressor (a decompressor left mid-stream refuses the next header).
ImageInfo JpegDecoder::probe(std::span<const uint8_t> bytes) {
  State& s = *state_;
  s.budget.start();  // every call has its own budget, probe() included
  ImageInfo info;
  try {
    s.read_header(bytes);
    info = {static_cast<int>(s.cinfo.image_width), static_cast<int>(s.cinfo.image_height), "jpeg"};
  } catch (...) {
    jpeg_abort_decompress(&s.cinfo);
    throw;
  }
  jpeg_abort_decompress(&s.cinfo);
  return info;
}

void JpegDecoder::decode(std::span<const uint8_t> bytes, const CropRect& crop, int min_side,
                         DctScaling scaling, DecodeRegion region, RgbImage& out) {
  try {
    state_->decode(bytes, crop, min_side, scaling, region, out);
  } catch (...) {
    jpeg_abort_decompress(&state_->cinfo);
    throw;
  }
}

}  // namespace mmprof::detail
