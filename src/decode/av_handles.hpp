#pragma once
// One RAII owner per FFmpeg handle (as DALI does): every handle the decoders and the generator's
// encoders hold is a unique_ptr whose deleter calls the matching FFmpeg free function, so no
// error path leaks. Only .cpp files of src/decode and src/data/gen include it.
#include <memory>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libswscale/swscale.h>
}

namespace mmprof::detail {

struct AvFormatCloser {
  void operator()(AVFormatContext* p) const noexcept { avformat_close_input(&p); }
};
// A muxer (output) context: freed, not closed; its AVIOContext has its own owner.
struct AvOutputFreer {
  void operator()(AVFormatContext* p) const noexcept { avformat_free_context(p); }
};
struct AvCodecContextFreer {
  void operator()(AVCodecContext* p) const noexcept { avcodec_free_context(&p); }
};
struct AvFrameFreer {
  void operator()(AVFrame* p) const noexcept { av_frame_free(&p); }
};
struct AvPacketFreer {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
struct SwsFreer {
  void operator()(SwsContext* p) const noexcept { sws_freeContext(p); }
};
// avio_context_free leaves the I/O buffer alone, and avio may have replaced the buffer we gave it,
// so the current one is freed through the context.
struct AvioFreer {
  void operator()(AVIOContext* p) const noexcept {
    if (p != nullptr) av_freep(&p->buffer);
    avio_context_free(&p);
  }
};

using AvFormatPtr = std::unique_ptr<AVFormatContext, AvFormatCloser>;
using AvOutputPtr = std::unique_ptr<AVFormatContext, AvOutputFreer>;
using AvCodecContextPtr = std::unique_ptr<AVCodecContext, AvCodecContextFreer>;
using AvFramePtr = std::unique_ptr<AVFrame, AvFrameFreer>;
using AvPacketPtr = std::unique_ptr<AVPacket, AvPacketFreer>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFreer>;
using AvioPtr = std::unique_ptr<AVIOContext, AvioFreer>;

// av_err2str is a C compound-literal macro; this is its C++ equivalent.
inline std::string av_error_string(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

}  // namespace mmprof::detail
