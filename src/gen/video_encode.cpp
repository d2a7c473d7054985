#include "gen/video_encode.hpp"

#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>

#include "gen/av_check.hpp"
#include "util/error.hpp"

extern "C" {
#include <libavutil/dict.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
}

namespace mmprof::gen {
namespace {

// A seekable in-memory file: the mp4 muxer seeks back to patch sizes and needs AVSEEK_SIZE.
struct MemorySink {
  std::vector<uint8_t>* out;
  size_t pos = 0;
};

int sink_write(void* opaque, uint8_t* data, int size) {
  auto* sink = static_cast<MemorySink*>(opaque);
  const size_t n = static_cast<size_t>(size);
  if (sink->pos + n > sink->out->size()) sink->out->resize(sink->pos + n);
  std::memcpy(sink->out->data() + sink->pos, data, n);
  sink->pos += n;
  return size;
}

int64_t sink_seek(void* opaque, int64_t offset, int whence) {
  auto* sink = static_cast<MemorySink*>(opaque);
  const auto size = static_cast<int64_t>(sink->out->size());
  if (whence & AVSEEK_SIZE) return size;
  int64_t target = offset;
  switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET:
      break;
    case SEEK_CUR:
      target += static_cast<int64_t>(sink->pos);
      break;
    case SEEK_END:
      target += size;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (target < 0) return AVERROR(EINVAL);
  sink->pos = static_cast<size_t>(target);
  return target;
}

detail::AvioPtr open_sink(MemorySink& sink) {
  constexpr int kBufferSize = 1 << 16;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kBufferSize));
  if (buffer == nullptr) throw RunError("mp4: out of memory");
  AVIOContext* io =
      avio_alloc_context(buffer, kBufferSize, 1, &sink, nullptr, sink_write, sink_seek);
  if (io == nullptr) {
    av_free(buffer);
    throw RunError("mp4: out of memory");
  }
  return detail::AvioPtr(io);
}

struct DictionaryOwner {
  AVDictionary* dict = nullptr;
  ~DictionaryOwner() { av_dict_free(&dict); }
};

// How each codec of `mmprof gen --video-codec` is encoded: one thread (multi-threaded encoders
// change decisions with the thread count, and the generator gets its parallelism from encoding
// several samples at once) and keyframes exactly every keyframe_interval_s (scene cuts off).
struct CodecSetup {
  const char* encoder;      // libavcodec's encoder
  const char* description;  // dataset.json's generator.video_codec
  const char* name;         // the codec as FFmpeg names it (dataset.json's videos.codec)
  std::initializer_list<std::pair<const char*, const char*>> options;
  int max_b_frames;  // -1: the encoder's default
};

const CodecSetup& codec_setup(VideoCodec codec) {
  static const CodecSetup h264{
      "libx264",
      "h264 (libx264 veryfast, crf 20, threads 1)",
      "h264",
      {{"preset", "veryfast"}, {"crf", "20"}, {"x264-params", "scenecut=0"}},
      -1};
  // Constant quality needs a zero bitrate; "good" at cpu-used 5 is libvpx's usual speed for video
  // on demand, with alt-ref frames (hidden, packed in superframes) as YouTube's VP9 has.
  static const CodecSetup vp9{"libvpx-vp9",
                              "vp9 (libvpx-vp9 good, cpu-used 5, crf 32, threads 1)",
                              "vp9",
                              {{"deadline", "good"}, {"cpu-used", "5"}, {"crf", "32"}, {"b", "0"}},
                              -1};
  // Advanced Simple Profile as DivX/Xvid archives: two B-frames between references, fixed qscale.
  static const CodecSetup mpeg4{"mpeg4",
                                "mpeg4 (FFmpeg's encoder, 2 B-frames, qscale 4, threads 1)",
                                "mpeg4",
                                {{"qscale", "4"}, {"sc_threshold", "1000000000"}},
                                2};
  switch (codec) {
    case VideoCodec::vp9:
      return vp9;
    case VideoCodec::mpeg4:
      return mpeg4;
    case VideoCodec::h264:
      break;
  }
  return h264;
}

detail::AvCodecContextPtr open_encoder(const VideoParams& p, const CodecSetup& setup,
                                       bool global_header) {
  const AVCodec* codec = avcodec_find_encoder_by_name(setup.encoder);
  if (codec == nullptr) {
    throw UnavailableError(std::string("libavcodec was built without ") + setup.encoder);
  }
  detail::AvCodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw RunError("mp4: out of memory");
  ctx->width = p.width;
  ctx->height = p.height;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = {1, p.fps};
  ctx->framerate = {p.fps, 1};
  ctx->gop_size = p.fps * p.keyframe_interval_s;
  ctx->keyint_min = ctx->gop_size;
  if (setup.max_b_frames >= 0) ctx->max_b_frames = setup.max_b_frames;
  ctx->thread_count = 1;
  // No encoder version in the stream (MPEG-4's user data): the bytes depend on the inputs only.
  ctx->flags |= AV_CODEC_FLAG_BITEXACT;
  if (global_header) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  DictionaryOwner options;
  for (const auto& [key, value] : setup.options)
    av_dict_set(&options.dict, key, value, 0);
  check_av(avcodec_open2(ctx.get(), codec, &options.dict),
           std::string("mp4: open ") + setup.encoder);
  return ctx;
}

// Moves every packet the encoder has ready into the muxer.
void drain(AVCodecContext* ctx, AVFormatContext* fmt, AVStream* st, AVPacket* packet) {
  for (;;) {
    const int rc = avcodec_receive_packet(ctx, packet);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
    check_av(rc, "mp4: encode");
    av_packet_rescale_ts(packet, ctx->time_base, st->time_base);
    packet->stream_index = st->index;
    check_av(av_interleaved_write_frame(fmt, packet), "mp4: mux");
  }
}

detail::AvFramePtr make_frame(const VideoParams& p) {
  detail::AvFramePtr frame(av_frame_alloc());
  if (!frame) throw RunError("mp4: out of memory");
  frame->format = AV_PIX_FMT_YUV420P;
  frame->width = p.width;
  frame->height = p.height;
  check_av(av_frame_get_buffer(frame.get(), 0), "mp4: frame buffer");
  return frame;
}

// libx264 and libvpx report their settings and statistics at AV_LOG_INFO, lines per clip. FFmpeg's
// log level is process-wide, so it is lowered only while it still has FFmpeg's default value:
// a level the program chose on purpose is left alone.
void quiet_encoder_logs() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_WARNING);
  });
}

}  // namespace

const char* codec_name(VideoCodec codec) {
  return codec_setup(codec).name;
}

const char* codec_description(VideoCodec codec) {
  return codec_setup(codec).description;
}

void encode_mp4(const VideoParams& p, VideoCodec codec,
                const std::function<void(int, const YuvView&)>& render, std::vector<uint8_t>& out) {
  quiet_encoder_logs();
  out.clear();
  MemorySink sink{&out};
  detail::AvioPtr io = open_sink(sink);
  AVFormatContext* raw = nullptr;
  check_av(avformat_alloc_output_context2(&raw, nullptr, "mp4", nullptr), "mp4: muxer");
  detail::AvOutputPtr fmt(raw);
  fmt->pb = io.get();
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_BITEXACT;
  detail::AvCodecContextPtr ctx =
      open_encoder(p, codec_setup(codec), (fmt->oformat->flags & AVFMT_GLOBALHEADER) != 0);
  AVStream* st = avformat_new_stream(fmt.get(), nullptr);
  if (st == nullptr) throw RunError("mp4: out of memory");
  check_av(avcodec_parameters_from_context(st->codecpar, ctx.get()), "mp4: stream parameters");
  st->time_base = ctx->time_base;
  st->avg_frame_rate = ctx->framerate;
  check_av(avformat_write_header(fmt.get(), nullptr), "mp4: header");
  detail::AvFramePtr frame = make_frame(p);
  detail::AvPacketPtr packet(av_packet_alloc());
  if (!packet) throw RunError("mp4: out of memory");
  for (int i = 0; i < p.frames; ++i) {
    check_av(av_frame_make_writable(frame.get()), "mp4: frame buffer");
    YuvView view{p.width, p.height};
    for (int k = 0; k < 3; ++k)
      view.plane[k] = frame->data[k], view.stride[k] = frame->linesize[k];
    render(i, view);
    frame->pts = i;
    check_av(avcodec_send_frame(ctx.get(), frame.get()), "mp4: encode");
    drain(ctx.get(), fmt.get(), st, packet.get());
  }
  check_av(avcodec_send_frame(ctx.get(), nullptr), "mp4: flush");
  drain(ctx.get(), fmt.get(), st, packet.get());
  check_av(av_write_trailer(fmt.get()), "mp4: trailer");
  avio_flush(io.get());
}

}  // namespace mmprof::gen
