#include "decode/video_decoder.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "decode/av_handles.hpp"
#include "decode/av_log.hpp"
#include "decode/decode_error.hpp"
#include "decode/media_format.hpp"
#include "decode/memory_io.hpp"
#include "decode/rgb_convert.hpp"

namespace mmprof {
namespace {

using namespace detail;

[[noreturn]] void corrupt(int err) {
  throw DecodeError("truncated or corrupt video: " + av_error_string(err) + ffmpeg_error_suffix());
}

int64_t frame_pts(const AVFrame* f) {
  return f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp : f->pts;
}

// A demuxer indexes every sample from the header (MP4's moov), so sample data past the end of
// the bytes means a truncated file whose missing frames would otherwise silently vanish.
void require_complete(AVStream* st, size_t size) {
  int64_t end = 0;
  for (int i = 0, n = avformat_index_get_entries_count(st); i < n; ++i) {
    const AVIndexEntry* e = avformat_index_get_entry(st, i);
    if (e != nullptr && e->pos >= 0) end = std::max(end, e->pos + e->size);
  }
  if (end > static_cast<int64_t>(size)) {
    throw DecodeError("truncated or corrupt video: frame data runs to byte " + std::to_string(end) +
                      " but the file has " + std::to_string(size) + " bytes");
  }
}

VideoInfo describe(const AVFormatContext* fmt, const AVStream* st) {
  VideoInfo info;
  const AVCodecParameters* par = st->codecpar;
  info.width = par->width;
  info.height = par->height;
  info.codec = avcodec_get_name(par->codec_id);
  const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(par->format));
  info.pix_fmt = pix != nullptr ? pix : "";
  if (st->duration != AV_NOPTS_VALUE) {
    info.duration_s = static_cast<double>(st->duration) * av_q2d(st->time_base);
  } else if (fmt->duration != AV_NOPTS_VALUE) {
    info.duration_s = static_cast<double>(fmt->duration) / AV_TIME_BASE;
  }
  const AVRational rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
  info.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
  info.frames = st->nb_frames > 0 ? st->nb_frames : std::llround(info.duration_s * info.fps);
  return info;
}

// Source plane pointers for the crop's top-left pixel: each plane is offset by its own
// subsampling and bytes per pixel (x, y must lie on the chroma grid).
void crop_planes(const AVFrame* f, const AVPixFmtDescriptor* d, int x, int y,
                 const uint8_t* planes[4]) {
  bool done[4] = {};
  for (int p = 0; p < 4; ++p)
    planes[p] = f->data[p];
  const bool yuv = (d->flags & AV_PIX_FMT_FLAG_RGB) == 0 && d->nb_components >= 3;
  for (int c = 0; c < d->nb_components; ++c) {
    const AVComponentDescriptor& comp = d->comp[c];
    if (done[comp.plane]) continue;
    const bool chroma = yuv && (c == 1 || c == 2);
    const int sx = chroma ? d->log2_chroma_w : 0, sy = chroma ? d->log2_chroma_h : 0;
    planes[comp.plane] += static_cast<ptrdiff_t>(y >> sy) * f->linesize[comp.plane] +
                          static_cast<ptrdiff_t>(x >> sx) * comp.step;
    done[comp.plane] = true;
  }
}

// Everything of a stream's parameters that reaches an opened decoder (avcodec_parameters_to_context
// plus the packet time base); bit rate and other per-clip figures are left out, as the decoder
// does not read them. Two clips with equal setups can share one codec context.
struct DecoderSetup {
  AVCodecID codec_id = AV_CODEC_ID_NONE;
  uint32_t codec_tag = 0;
  int width = 0, height = 0, format = -1, profile = 0, level = 0, video_delay = 0;
  int field_order = 0, color_range = 0, color_primaries = 0, color_trc = 0, color_space = 0;
  int chroma_location = 0;
  int sar_num = 0, sar_den = 0, time_base_num = 0, time_base_den = 0;
  std::vector<uint8_t> extradata;

  bool operator==(const DecoderSetup&) const = default;
};

// An enum field of the stream's parameters as the int it is stored in. Demuxers and parsers copy
// these from the file, and a damaged one can hold a value outside the enum (fuzz_decode found a
// colour transfer characteristic of 126): loading it as the enum type would be undefined.
template <typename E>
int stored_value(const E& field) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int));
  int v = 0;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

DecoderSetup setup_of(const AVStream* st) {
  const AVCodecParameters* p = st->codecpar;
  DecoderSetup s;
  s.codec_id = p->codec_id;
  s.codec_tag = p->codec_tag;
  s.width = p->width;
  s.height = p->height;
  s.format = p->format;
  s.profile = p->profile;
  s.level = p->level;
  s.video_delay = p->video_delay;
  s.field_order = stored_value(p->field_order);
  s.color_range = stored_value(p->color_range);
  s.color_primaries = stored_value(p->color_primaries);
  s.color_trc = stored_value(p->color_trc);
  s.color_space = stored_value(p->color_space);
  s.chroma_location = stored_value(p->chroma_location);
  s.sar_num = p->sample_aspect_ratio.num;
  s.sar_den = p->sample_aspect_ratio.den;
  s.time_base_num = st->time_base.num;
  s.time_base_den = st->time_base.den;
  if (p->extradata != nullptr) s.extradata.assign(p->extradata, p->extradata + p->extradata_size);
  return s;
}

}  // namespace

struct VideoDecoder::Impl {
  int threads = 1;
  int64_t max_pixels = 0;
  const CudaDevice* device = nullptr;  // decode through FFmpeg's CUDA hwaccel
  VideoDecodeLevers levers;
  DecodeBudget budget;
  MemoryInput input;
  AvioPtr avio;  // declared before fmt: the demuxer must close before its I/O context goes
  AvFormatPtr fmt;
  AvCodecContextPtr codec;
  DecoderSetup codec_setup;     // what `codec` was opened for
  bool codec_reusable = false;  // false once an error may have left state in `codec`
  AvFramePtr cur{av_frame_alloc()}, next{av_frame_alloc()};
  AvPacketPtr packet{av_packet_alloc()};
  SwsPtr sws;  // kept across clips: sws_getCachedContext reuses it while sizes repeat
  std::vector<uint8_t> scratch;  // sws_to_rgb24's padded rows for widths not a multiple of 8
  AVStream* stream = nullptr;
  VideoInfo info;
  VideoDecodeStats stats;
  bool have_cur = false, demux_eof = false;
  int64_t start_pts = 0;
  int64_t last_pos = -1;    // byte position of the last packet sent to the decoder (-1: none yet)
  int64_t index_shift = 0;  // pts - index timestamp of keyframes (MP4 indexes by dts), as read
  int64_t last_target = INT64_MIN;
  int64_t skip_before = INT64_MIN;   // non-reference packets presented before this are dropped
  bool skipped = false;              // a packet was sent with AVDISCARD_NONREF for this target
  int64_t max_pts_sent = INT64_MIN;  // the latest presentation time of any packet sent

  void close() noexcept {
    if (!levers.reuse_decoder || !codec_reusable) codec.reset();
    fmt.reset();
    avio.reset();
    av_frame_unref(cur.get());
    av_frame_unref(next.get());
    av_packet_unref(packet.get());
    stream = nullptr;
    have_cur = demux_eof = false;
  }

  void open(std::span<const uint8_t> bytes);
  void open_codec();
  bool seek_skips_packets(int64_t target) const;
  void position_at(int64_t target);
  bool decode_until(int64_t target, bool skip_nonref);
  void seek(int64_t target);
  bool next_frame();
  void note_packet_position() noexcept;
  void convert(const CropRect& crop, int dst_w, int dst_h, uint8_t* out);
  // Positions at each time in turn and calls take(i) with frame i in `cur`.
  void for_each_frame(std::span<const double> times, const std::function<void(size_t)>& take);
};

void VideoDecoder::Impl::open(std::span<const uint8_t> bytes) {
  close();
  stats = {};
  budget.start();
  clear_ffmpeg_error();
  if (bytes.empty()) throw DecodeError("empty video data (0 bytes)");
  input.reset(bytes);
  avio = input.make_avio();
  int err = 0;
  static const std::string demuxers = video_demuxers();
  fmt = input.open_format(avio.get(), demuxers, &err);
  if (!fmt) {
    throw DecodeError("not a video mmprof reads (" + listed_formats(Modality::video, "/") +
                      "), or truncated or corrupt: " + av_error_string(err) +
                      ffmpeg_error_suffix());
  }
  if ((err = avformat_find_stream_info(fmt.get(), nullptr)) < 0) corrupt(err);
  const int index = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (index < 0) throw DecodeError("no video stream in the file");
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    fmt->streams[i]->discard = static_cast<int>(i) == index ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
  }
  stream = fmt->streams[index];
  check_pixel_limit(stream->codecpar->width, stream->codecpar->height, max_pixels, "video frame",
                    "video.max_pixels");
  require_complete(stream, bytes.size());
  open_codec();
  info = describe(fmt.get(), stream);
  start_pts = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
  last_pos = -1;
  index_shift = 0;
  max_pts_sent = INT64_MIN;
  last_target = INT64_MIN;
}

// A context kept from the previous clip is flushed, exactly as a seek does, when this clip needs
// the same setup; otherwise a new one is opened.
void VideoDecoder::Impl::open_codec() {
  DecoderSetup setup = setup_of(stream);
  if (codec && levers.reuse_decoder && codec_reusable && setup == codec_setup) {
    avcodec_flush_buffers(codec.get());
    return;
  }
  codec_reusable = false;
  const AVCodec* decoder = avcodec_find_decoder(stream->codecpar->codec_id);
  if (decoder == nullptr) {
    throw DecodeError(std::string("no decoder for video codec ") +
                      avcodec_get_name(stream->codecpar->codec_id));
  }
  codec.reset(avcodec_alloc_context3(decoder));
  if (!codec) throw std::bad_alloc();
  int err = avcodec_parameters_to_context(codec.get(), stream->codecpar);
  if (err < 0) corrupt(err);
  codec->pkt_timebase = stream->time_base;
  codec->thread_count = std::max(threads, 1);
  codec->max_pixels = max_pixels > 0 && max_pixels < INT_MAX ? max_pixels : INT_MAX;
  if (threads > 1) codec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  if (device != nullptr) {
    codec->hw_device_ctx = av_buffer_ref(static_cast<AVBufferRef*>(device->av_buffer()));
    codec->get_format = [](AVCodecContext* c, const AVPixelFormat* f) {
      return static_cast<AVPixelFormat>(pick_cuda_format(c, reinterpret_cast<const int*>(f)));
    };
  }
  if ((err = avcodec_open2(codec.get(), decoder, nullptr)) < 0) corrupt(err);
  codec_setup = std::move(setup);
  codec_reusable = true;
  ++stats.decoder_opens;
}

// Whether seeking for `target` would skip packets not yet decoded: the keyframe the demuxer lands
// on (found in its index the way libavformat's mov_seek_stream does, after mapping the pts target
// onto the index's timeline) lies beyond the last packet sent, with at least one packet between.
// Positions are compared in bytes, which holds whatever timeline the index uses. Without an index
// (or a position) the answer is no, and decoding goes forward.
bool VideoDecoder::Impl::seek_skips_packets(int64_t target) const {
  const int i = av_index_search_timestamp(stream, target - index_shift, AVSEEK_FLAG_BACKWARD);
  if (i <= 0) return false;  // no keyframe, or the first entry: nothing before it to skip
  const AVIndexEntry* key = avformat_index_get_entry(stream, i);
  const AVIndexEntry* before = avformat_index_get_entry(stream, i - 1);
  return key != nullptr && before != nullptr && key->pos > last_pos && before->pos > last_pos;
}

// Keyframe-aware positioning for the first frame with pts >= target. The frame in hand is reused
// when it already qualifies; going backwards needs a seek; going forwards seeks only when that
// skips packets (seek_skips_packets): a target before the next keyframe is decoded forward, as a
// seek would land on a keyframe already decoded and decode its frames again.
void VideoDecoder::Impl::position_at(int64_t target) {
  if (have_cur && target >= last_target && frame_pts(cur.get()) >= target) {
    last_target = target;
    return;
  }
  if (target < last_target || seek_skips_packets(target)) seek(target);
  last_target = target;
  if (!decode_until(target, levers.skip_nonref) && skipped && have_cur &&
      frame_pts(cur.get()) < max_pts_sent) {
    // Past the end the last frame stands for the target, and the last one presented was a
    // skipped non-reference frame: decode the last GOP again, every frame. (A codec that dropped
    // nothing, as libvpx's VP9, ends on its last frame and is not decoded twice.)
    seek(target);
    decode_until(target, false);
  }
  if (!have_cur)
    throw DecodeError("truncated or corrupt video: no frame decoded" + ffmpeg_error_suffix());
}

// Decodes until the frame in hand is presented at or after target; false when the stream drained
// first (the last frame stands for times past the end).
bool VideoDecoder::Impl::decode_until(int64_t target, bool skip_nonref) {
  skip_before = skip_nonref ? target : INT64_MIN;
  skipped = false;
  bool reached = true;
  while (!have_cur || frame_pts(cur.get()) < target) {
    if (!next_frame()) {
      reached = false;
      break;
    }
  }
  skip_before = INT64_MIN;
  return reached;
}

void VideoDecoder::Impl::seek(int64_t target) {
  const int err = av_seek_frame(fmt.get(), stream->index, target, AVSEEK_FLAG_BACKWARD);
  if (err < 0) corrupt(err);
  avcodec_flush_buffers(codec.get());
  av_frame_unref(cur.get());
  have_cur = demux_eof = false;
  ++stats.seeks;
}

// Moves the next decoded frame into `cur`, reading packets as the decoder asks; at the end of the
// file a null packet drains the frames the decoder still holds. False once it is drained.
bool VideoDecoder::Impl::next_frame() {
  for (;;) {
    budget.check();
    int err = avcodec_receive_frame(codec.get(), next.get());
    if (err == 0) {
      av_frame_unref(cur.get());
      av_frame_move_ref(cur.get(), next.get());
      have_cur = true;
      ++stats.frames_decoded;
      return true;
    }
    if (err == AVERROR_EOF) return false;
    if (err != AVERROR(EAGAIN)) corrupt(err);
    if (demux_eof) return false;  // not expected after a drain; avoids looping forever
    err = av_read_frame(fmt.get(), packet.get());
    if (err == AVERROR_EOF) {
      demux_eof = true;
      err = avcodec_send_packet(codec.get(), nullptr);
    } else if (err >= 0) {
      if (packet->stream_index == stream->index) {
        ++stats.packets_read;
        note_packet_position();
        // Per packet: the decoder reads skip_frame for each picture (frame threads copy it when
        // the packet is submitted).
        const bool before_target = packet->pts != AV_NOPTS_VALUE && packet->pts < skip_before;
        codec->skip_frame = before_target ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
        skipped = skipped || before_target;
        err = avcodec_send_packet(codec.get(), packet.get());
      }
      av_packet_unref(packet.get());
    }
    if (err < 0) corrupt(err);
  }
}

// MP4's index holds decode timestamps and libavformat seeks it with a pts target shifted by the
// stream's constant pts - dts offset; a keyframe packet shows that offset (0 where the index, as
// Matroska's, holds pts and packets carry no separate dts).
void VideoDecoder::Impl::note_packet_position() noexcept {
  if (packet->pos >= 0) last_pos = packet->pos;
  if (packet->pts != AV_NOPTS_VALUE) max_pts_sent = std::max(max_pts_sent, packet->pts);
  if ((packet->flags & AV_PKT_FLAG_KEY) != 0 && packet->pts != AV_NOPTS_VALUE &&
      packet->dts != AV_NOPTS_VALUE) {
    index_shift = packet->pts - packet->dts;
  }
}

void VideoDecoder::Impl::convert(const CropRect& crop, int dst_w, int dst_h, uint8_t* out) {
  const AVFrame* f = cur.get();
  const auto pix = static_cast<AVPixelFormat>(f->format);
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(pix);
  if (desc == nullptr || (desc->flags & AV_PIX_FMT_FLAG_HWACCEL) != 0) {
    throw DecodeError("unsupported video pixel format");
  }
  // Clamp to the frame (its size may differ from the header's) and snap the origin down onto the
  // chroma grid, so the chroma planes are offset by whole samples (4:2:0: even x and y).
  CropRect c = crop.w > 0 && crop.h > 0 ? crop : CropRect{0, 0, f->width, f->height};
  c.x = std::clamp(c.x, 0, f->width - 1) & ~((1 << desc->log2_chroma_w) - 1);
  c.y = std::clamp(c.y, 0, f->height - 1) & ~((1 << desc->log2_chroma_h) - 1);
  c.w = std::clamp(c.w, 1, f->width - c.x);
  c.h = std::clamp(c.h, 1, f->height - c.y);
  const uint8_t* planes[4];
  crop_planes(f, desc, c.x, c.y, planes);
  sws.reset(sws_getCachedContext(sws.release(), c.w, c.h, pix, dst_w, dst_h, AV_PIX_FMT_RGB24,
                                 SWS_BILINEAR, nullptr, nullptr, nullptr));
  if (!sws) throw DecodeError("cannot convert video frames from " + info.pix_fmt + " to RGB");
  if (!sws_to_rgb24(sws.get(), planes, f->linesize, c.h, out, dst_w, dst_h, scratch)) {
    throw DecodeError("video frame conversion failed");
  }
}

VideoDecoder::VideoDecoder(int threads, int64_t max_pixels, VideoDecodeLevers levers,
                           DecodeBudget budget)
    : impl_(std::make_unique<Impl>()) {
  impl_->budget = budget;
  if (!impl_->cur || !impl_->next || !impl_->packet) throw std::bad_alloc();
  impl_->threads = threads;
  impl_->max_pixels = max_pixels;
  impl_->levers = levers;
  quiet_ffmpeg_log();
}

VideoDecoder::~VideoDecoder() = default;

VideoInfo VideoDecoder::open(std::span<const uint8_t> bytes) {
  try {
    impl_->open(bytes);
  } catch (...) {
    impl_->codec_reusable = false;
    impl_->close();
    throw;
  }
  return impl_->info;
}

void VideoDecoder::Impl::for_each_frame(std::span<const double> times,
                                        const std::function<void(size_t)>& take) {
  if (!fmt) throw std::logic_error("VideoDecoder::decode_frames before open()");
  const double tb = av_q2d(stream->time_base);
  try {
    for (size_t i = 0; i < times.size(); ++i) {
      // Times are compared at the stream's resolution: rounded to the nearest tick, so k / fps
      // give or take floating-point error (or a microsecond) names frame k.
      position_at(start_pts + std::llround(std::max(times[i], 0.0) / tb));
      take(i);
    }
  } catch (...) {
    codec_reusable = false;  // the next clip gets a fresh context
    throw;
  }
}

void VideoDecoder::decode_frames(std::span<const double> times, const CropRect& crop, int dst_w,
                                 int dst_h, uint8_t* out) {
  if (dst_w <= 0 || dst_h <= 0) throw std::invalid_argument("VideoDecoder: empty output size");
  const size_t frame_bytes = static_cast<size_t>(dst_w) * dst_h * 3;
  impl_->for_each_frame(
      times, [&](size_t i) { impl_->convert(crop, dst_w, dst_h, out + i * frame_bytes); });
}

void VideoDecoder::use_device(const CudaDevice* device) {
  impl_->device = device;
  impl_->codec.reset();  // the next open() makes a context for it
}

void VideoDecoder::decode_frames(std::span<const double> times, const DeviceFrameSink& sink) {
  impl_->for_each_frame(times,
                        [&](size_t i) { sink(detail::device_frame_of(impl_->cur.get()), i); });
}

const VideoDecodeStats& VideoDecoder::stats() const noexcept {
  return impl_->stats;
}

void VideoDecoder::close() noexcept {
  impl_->close();
}

}  // namespace mmprof
