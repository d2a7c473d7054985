#include "gen/image_encode.hpp"

#include <turbojpeg.h>

#include <cstring>
#include <string>

#include "gen/av_check.hpp"
#include "util/error.hpp"

namespace mmprof::gen {

void JpegEncoder::HandleDeleter::operator()(void* handle) const noexcept {
  tjDestroy(handle);
}

JpegEncoder::JpegEncoder() : handle_(tjInitCompress()) {
  if (!handle_) throw RunError("libturbojpeg: cannot create a compressor");
}

JpegEncoder::~JpegEncoder() = default;

void JpegEncoder::encode(const RgbImage& image, int quality, std::vector<uint8_t>& out) {
  // Sized for the worst case up front so libturbojpeg never reallocates behind our back
  // (TJFLAG_NOREALLOC) and the vector's capacity is reused across images.
  out.resize(tjBufSize(image.width, image.height, TJSAMP_420));
  unsigned char* buffer = out.data();
  unsigned long size = out.size();
  const int rc =
      tjCompress2(handle_.get(), image.pixels.data(), image.width, 0, image.height, TJPF_RGB,
                  &buffer, &size, TJSAMP_420, quality, TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT);
  if (rc != 0) throw RunError(std::string("libturbojpeg: ") + tjGetErrorStr2(handle_.get()));
  out.resize(size);
}

void encode_png(const RgbImage& image, std::vector<uint8_t>& out) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
  if (codec == nullptr) throw UnavailableError("libavcodec was built without the png encoder");
  detail::AvCodecContextPtr ctx(avcodec_alloc_context3(codec));
  detail::AvFramePtr frame(av_frame_alloc());
  detail::AvPacketPtr packet(av_packet_alloc());
  if (!ctx || !frame || !packet) throw RunError("png: out of memory");
  ctx->width = image.width;
  ctx->height = image.height;
  ctx->pix_fmt = AV_PIX_FMT_RGB24;
  ctx->time_base = {1, 1};
  ctx->flags |= AV_CODEC_FLAG_BITEXACT;
  check_av(avcodec_open2(ctx.get(), codec, nullptr), "png: open encoder");
  frame->format = AV_PIX_FMT_RGB24;
  frame->width = image.width;
  frame->height = image.height;
  // A non-refcounted frame: libavcodec copies it, so our buffer stays ours.
  frame->data[0] = const_cast<uint8_t*>(image.pixels.data());
  frame->linesize[0] = image.width * 3;
  check_av(avcodec_send_frame(ctx.get(), frame.get()), "png: encode");
  check_av(avcodec_receive_packet(ctx.get(), packet.get()), "png: encode");
  out.assign(packet->data, packet->data + packet->size);
}

}  // namespace mmprof::gen
