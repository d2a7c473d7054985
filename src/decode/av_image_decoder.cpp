#include "decode/av_image_decoder.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>

#include "decode/av_handles.hpp"
#include "decode/av_log.hpp"
#include "decode/decode_error.hpp"
#include "decode/media_format.hpp"
#include "decode/pixel_limit.hpp"
#include "decode/rgb_convert.hpp"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace mmprof::detail {
namespace {

// The libavcodec decoder of a format of the table (its ffmpeg_codec column), resolved once per
// row: AV_CODEC_ID_NONE for a name outside the table, a row without a codec, or a codec name this
// FFmpeg does not know.
AVCodecID codec_for(std::string_view format) {
  static const std::vector<AVCodecID> ids = [] {
    std::vector<AVCodecID> out;
    for (const MediaFormat& f : media_formats()) {
      const AVCodecDescriptor* codec =
          f.ffmpeg_codec.empty()
              ? nullptr
              : avcodec_descriptor_get_by_name(std::string(f.ffmpeg_codec).c_str());
      out.push_back(codec != nullptr ? codec->id : AV_CODEC_ID_NONE);
    }
    return out;
  }();
  const MediaFormat* row = format_named(format);
  return row != nullptr ? ids[static_cast<size_t>(row - media_formats().data())] : AV_CODEC_ID_NONE;
}

[[noreturn]] void fail(std::string_view format, const char* what, int err) {
  std::string message = "corrupt ";
  message.append(format).append(" data: ").append(what);
  if (err < 0) message.append(": ").append(av_error_string(err));
  throw DecodeError(message + ffmpeg_error_suffix());
}

// The packet references our padded copy instead of owning one, so avcodec_send_packet does not
// copy the whole file again (a fresh multi-page allocation per image).
void no_free(void*, uint8_t*) {}

// The RGB bytes converted per swscale call at most, in whole strips of rows: an image up to this
// size converts in one call (as fast as ever: 64-row strips cost 3 % of PNG throughput), a larger
// one strip by strip (a 13000x13000 PNG: 104 rows a strip).
constexpr size_t kStripBytes = 4 << 20;

}  // namespace

struct AvImageDecoder::Impl {
  int64_t max_pixels = 0;
  AvCodecContextPtr codec;
  AvFramePtr frame{av_frame_alloc()};
  AvPacketPtr packet{av_packet_alloc()};
  // The conversion of a full strip and of the last, shorter one: each cached, so a dataset of
  // images of one size creates no context after its first image.
  SwsPtr sws, sws_last;
  std::vector<uint8_t> scratch;  // sws_to_rgb24's padded rows
  std::vector<uint8_t> padded;   // the input plus FFmpeg's zeroed padding; grows only
  std::vector<uint8_t> still;    // an animated WebP's first frame as a still WebP
  RgbImage first_frame;          // that frame decoded, before it is placed on its canvas

  Impl() {
    if (!frame || !packet) throw std::bad_alloc();
    quiet_ffmpeg_log();
  }

  void copy_padded(std::span<const uint8_t> bytes) {
    const size_t need = bytes.size() + AV_INPUT_BUFFER_PADDING_SIZE;
    if (padded.size() < need) padded.resize(need);
    std::memcpy(padded.data(), bytes.data(), bytes.size());
    std::memset(padded.data() + bytes.size(), 0, AV_INPUT_BUFFER_PADDING_SIZE);
  }

  // A fresh context per image (params: from a demuxer). Reusing one after a flush is not safe:
  // FFmpeg 5.1's PNG decoder keeps its previous-row buffer, so the first rows of the next image
  // were filtered against the last image's rows (measured: 22 dB instead of bit-exact).
  void open_codec(AVCodecID id, std::string_view format, const AVCodecParameters* params) {
    codec.reset();
    const AVCodec* decoder = avcodec_find_decoder(id);
    if (decoder == nullptr) fail(format, "no FFmpeg decoder for it", 0);
    codec.reset(avcodec_alloc_context3(decoder));
    if (!codec) throw std::bad_alloc();
    if (params != nullptr) avcodec_parameters_to_context(codec.get(), params);
    codec->thread_count = 1;
    codec->max_pixels = max_pixels > 0 && max_pixels < INT_MAX ? max_pixels : INT_MAX;
    // A PNG chunk whose CRC does not match is damage, not a warning (libpng and PIL refuse it);
    // FFmpeg checks CRCs only when asked, and fails on them only with EXPLODE.
    if (id == AV_CODEC_ID_PNG) codec->err_recognition |= AV_EF_CRCCHECK | AV_EF_EXPLODE;
    if (const int err = avcodec_open2(codec.get(), decoder, nullptr); err < 0) {
      codec.reset();
      fail(format, "cannot open the decoder", err);
    }
  }

  // Sends the one packet then drains, so decoders with a delay give their frame at once.
  void decode_packet(AVPacket* pkt, std::string_view format, RgbImage& out) {
    struct Reset {
      Impl* self;
      AVPacket* pkt;
      ~Reset() {
        av_frame_unref(self->frame.get());
        av_packet_unref(pkt);
        self->codec.reset();
      }
    } reset{this, pkt};
    int err = avcodec_send_packet(codec.get(), pkt);
    if (err >= 0) err = avcodec_send_packet(codec.get(), nullptr);
    if (err >= 0) err = avcodec_receive_frame(codec.get(), frame.get());
    if (err < 0) fail(format, "the decoder gave no image", err);
    to_rgb(format, out);
  }

  // Converted to RGB a strip of rows at a time (kStripBytes) where each row converts on its own
  // (no chroma shared between rows): the conversion's padded scratch is then a strip, not a second
  // copy of the image (a 13000x13000 PNG peaked at 1.55 GB: the frame, that scratch and the RGB
  // image). A format with vertically subsampled chroma (WebP's yuv420p) converts whole. Strips are
  // a multiple of 8 rows, so swscale's ordered dither (16-bit to 8) keeps its phase.
  void to_rgb(std::string_view format, RgbImage& out) {
    const int w = frame->width, h = frame->height;
    const auto pix = static_cast<AVPixelFormat>(frame->format);
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(pix);
    if (w <= 0 || h <= 0 || desc == nullptr) fail(format, "unsupported size or pixel format", 0);
    const size_t row = static_cast<size_t>(w) * 3;
    const auto strip_rows = static_cast<int>(std::max<size_t>(kStripBytes / row / 8 * 8, 8));
    const int strip = desc->log2_chroma_h == 0 ? std::min(h, strip_rows) : h;
    if (out.pixels.size() < row * h) out.pixels.resize(row * h);
    for (int y = 0; y < h; y += strip) {
      const int rows = std::min(strip, h - y);
      SwsPtr& ctx = rows == strip ? sws : sws_last;
      ctx.reset(sws_getCachedContext(ctx.release(), w, rows, pix, w, rows, AV_PIX_FMT_RGB24,
                                     SWS_BILINEAR, nullptr, nullptr, nullptr));
      if (!ctx) fail(format, "unsupported size or pixel format", 0);
      const uint8_t* planes[4] = {};
      for (int p = 0; p < 4; ++p) {
        const bool palette = p == 1 && (desc->flags & AV_PIX_FMT_FLAG_PAL) != 0;
        planes[p] = frame->data[p] == nullptr || palette
                        ? frame->data[p]
                        : frame->data[p] + static_cast<ptrdiff_t>(y) * frame->linesize[p];
      }
      if (!sws_to_rgb24(ctx.get(), planes, frame->linesize, rows,
                        out.pixels.data() + row * static_cast<size_t>(y), w, rows, scratch)) {
        fail(format, "pixel conversion failed", 0);
      }
    }
    out.width = w;
    out.height = h;
    out.scale_num = out.scale_den = 1;
  }
};

AvImageDecoder::AvImageDecoder(int64_t max_pixels) : impl_(std::make_unique<Impl>()) {
  impl_->max_pixels = max_pixels;
}
AvImageDecoder::~AvImageDecoder() = default;

void AvImageDecoder::decode(std::span<const uint8_t> bytes, std::string_view format,
                            RgbImage& out) {
  if (format == "webp") {
    if (const auto frame = first_webp_frame(bytes, impl_->still)) {
      decode_on_canvas(*frame, out);
      return;
    }
  }
  decode_still(bytes, format, out);
}

// The first frame of an animated WebP, drawn at its offset on a black canvas (PIL's canvas is
// transparent black, and its RGB conversion drops the alpha).
void AvImageDecoder::decode_on_canvas(const WebpFrame& frame, RgbImage& out) {
  check_pixel_limit(frame.canvas_width, frame.canvas_height, impl_->max_pixels, "WebP canvas",
                    "image.max_pixels");
  const bool whole = frame.x == 0 && frame.y == 0 && frame.width == frame.canvas_width &&
                     frame.height == frame.canvas_height;
  if (whole) {
    decode_still(impl_->still, "webp", out);
    return;
  }
  decode_still(impl_->still, "webp", impl_->first_frame);
  const size_t row = static_cast<size_t>(frame.canvas_width) * 3;
  const RgbImage& f = impl_->first_frame;
  if (out.pixels.size() < row * frame.canvas_height) out.pixels.resize(row * frame.canvas_height);
  std::fill_n(out.pixels.begin(), row * frame.canvas_height, 0);
  const int w = std::clamp(frame.canvas_width - frame.x, 0, f.width);
  const int h = std::clamp(frame.canvas_height - frame.y, 0, f.height);
  for (int y = 0; w > 0 && y < h; ++y) {
    std::memcpy(out.pixels.data() + (frame.y + y) * row + static_cast<size_t>(frame.x) * 3,
                f.pixels.data() + static_cast<size_t>(y) * f.width * 3, static_cast<size_t>(w) * 3);
  }
  out.width = frame.canvas_width;
  out.height = frame.canvas_height;
  out.scale_num = out.scale_den = 1;
}

void AvImageDecoder::decode_still(std::span<const uint8_t> bytes, std::string_view format,
                                  RgbImage& out) {
  if (bytes.size() > static_cast<size_t>(INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)) {
    fail(format, "image larger than 2 GiB", 0);
  }
  clear_ffmpeg_error();
  Impl& m = *impl_;
  m.open_codec(codec_for(format), format, nullptr);
  m.copy_padded(bytes);
  AVPacket* pkt = m.packet.get();
  av_packet_unref(pkt);
  pkt->buf =
      av_buffer_create(m.padded.data(), static_cast<int>(m.padded.size()), no_free, nullptr, 0);
  if (pkt->buf == nullptr) throw std::bad_alloc();
  pkt->data = m.padded.data();
  pkt->size = static_cast<int>(bytes.size());
  m.decode_packet(pkt, format, out);
}

bool AvImageDecoder::has_decoder(std::string_view format) {
  const AVCodecID id = codec_for(format);
  return id != AV_CODEC_ID_NONE && avcodec_find_decoder(id) != nullptr;
}

}  // namespace mmprof::detail
