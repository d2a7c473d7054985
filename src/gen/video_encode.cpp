#include "gen/video_encode.hpp"

#include <cstring>
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

detail::AvCodecContextPtr open_x264(const VideoParams& p, bool global_header) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (codec == nullptr) throw UnavailableError("libavcodec was built without libx264");
  detail::AvCodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw RunError("mp4: out of memory");
  ctx->width = p.width;
  ctx->height = p.height;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = {1, p.fps};
  ctx->framerate = {p.fps, 1};
  ctx->gop_size = p.fps * p.keyframe_interval_s;
  ctx->keyint_min = ctx->gop_size;
  // One thread per encoder: x264's frame threads change decisions with the thread count, and the
  // generator gets its parallelism from encoding several samples at once.
  ctx->thread_count = 1;
  if (global_header) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  DictionaryOwner options;
  av_dict_set(&options.dict, "preset", "veryfast", 0);
  av_dict_set(&options.dict, "crf", "20", 0);
  av_dict_set(&options.dict, "x264-params", "scenecut=0", 0);
  check_av(avcodec_open2(ctx.get(), codec, &options.dict), "mp4: open libx264");
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

// libx264 reports its settings and statistics at AV_LOG_INFO, a dozen lines per clip. FFmpeg's
// log level is process-wide, so it is lowered only while it still has FFmpeg's default value:
// a level the program chose on purpose is left alone.
void quiet_x264_logs() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_WARNING);
  });
}

}  // namespace

void encode_mp4(const VideoParams& p, const std::function<void(int, const YuvView&)>& render,
                std::vector<uint8_t>& out) {
  quiet_x264_logs();
  out.clear();
  MemorySink sink{&out};
  detail::AvioPtr io = open_sink(sink);
  AVFormatContext* raw = nullptr;
  check_av(avformat_alloc_output_context2(&raw, nullptr, "mp4", nullptr), "mp4: muxer");
  detail::AvOutputPtr fmt(raw);
  fmt->pb = io.get();
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_BITEXACT;
  detail::AvCodecContextPtr ctx = open_x264(p, (fmt->oformat->flags & AVFMT_GLOBALHEADER) != 0);
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
