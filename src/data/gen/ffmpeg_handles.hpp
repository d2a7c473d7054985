#pragma once
// RAII owners for the FFmpeg handles the generator uses, so every path out (exceptions included)
// frees them. Only the gen encoders include this header.
#include <memory>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
}

namespace mmprof::gen {

struct CodecContextDeleter {
  void operator()(AVCodecContext* c) const noexcept { avcodec_free_context(&c); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const noexcept { av_frame_free(&f); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
// The muxer context only; its custom AVIOContext has its own owner (see video_encode.cpp).
struct FormatContextDeleter {
  void operator()(AVFormatContext* f) const noexcept { avformat_free_context(f); }
};
struct IoContextDeleter {
  void operator()(AVIOContext* io) const noexcept {
    if (io != nullptr) av_freep(&io->buffer);
    avio_context_free(&io);
  }
};

using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using FormatContextPtr = std::unique_ptr<AVFormatContext, FormatContextDeleter>;
using IoContextPtr = std::unique_ptr<AVIOContext, IoContextDeleter>;

// Throws RunError("<what>: <FFmpeg's message>") when `rc` < 0; returns rc otherwise.
int check_av(int rc, const std::string& what);

}  // namespace mmprof::gen
