#include "decode/cuda_decode.hpp"

// hwcontext_cuda.h needs the driver API's two handle types only; they are declared here, as
// FFmpeg's own dynamically loading users do, so no CUDA header is needed to build this file.
#define CUDA_VERSION 11000
typedef struct CUctx_st* CUcontext;    // NOLINT(modernize-use-using): the driver's C declaration
typedef struct CUstream_st* CUstream;  // NOLINT(modernize-use-using)
extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>
}

#include <new>

#include "decode/av_handles.hpp"
#include "decode/av_log.hpp"
#include "mmprof/error.hpp"

namespace mmprof {

using namespace detail;

int detail::pick_cuda_format(void* codec_context, const int* formats) {
  const auto* c = static_cast<AVCodecContext*>(codec_context);
  const AVPixelFormat sw = c->sw_pix_fmt;
  const bool takes = sw == AV_PIX_FMT_YUV420P || sw == AV_PIX_FMT_YUVJ420P ||
                     sw == AV_PIX_FMT_YUV444P || sw == AV_PIX_FMT_YUVJ444P || sw == AV_PIX_FMT_NV12;
  for (const int* f = formats; takes && *f != AV_PIX_FMT_NONE; ++f)
    if (*f == AV_PIX_FMT_CUDA) return *f;
  return avcodec_default_get_format(static_cast<AVCodecContext*>(codec_context),
                                    reinterpret_cast<const AVPixelFormat*>(formats));
}

DeviceFrame detail::device_frame_of(const void* av_frame) {
  const auto* f = static_cast<const AVFrame*>(av_frame);
  if (f->format != AV_PIX_FMT_CUDA || f->hw_frames_ctx == nullptr) {
    const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f->format));
    throw NotOnDevice(std::string("NVDEC did not decode it (FFmpeg decoded it on the CPU as ") +
                      (name != nullptr ? name : "an unknown format") + ")");
  }
  const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
  DeviceFrame d;
  d.width = f->width;
  d.height = f->height;
  if (frames->sw_format == AV_PIX_FMT_NV12) {
    d.layout = DeviceLayout::nv12;
  } else if (frames->sw_format == AV_PIX_FMT_YUV444P) {
    d.layout = DeviceLayout::yuv444p;
  } else {
    const char* name = av_get_pix_fmt_name(frames->sw_format);
    throw NotOnDevice(std::string("NVDEC decoded it as ") + (name != nullptr ? name : "?") +
                      ", a layout mmprof's kernels do not take (nv12, yuv444p)");
  }
  for (int p = 0; p < 3; ++p) {
    d.planes[p] = f->data[p];
    d.pitch[p] = f->linesize[p];
  }
  d.full_range = f->color_range == AVCOL_RANGE_JPEG;
  d.bt709 = f->colorspace == AVCOL_SPC_BT709;
  return d;
}

CudaDevice::CudaDevice(void* cuda_context) {
  quiet_ffmpeg_log();
  clear_ffmpeg_error();
  // A device on the caller's context (av_hwdevice_ctx_create would make or retain its own, and
  // refuses a primary context already active with other flags than blocking sync).
  AVBufferRef* ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
  if (ref == nullptr) throw UnavailableError("this FFmpeg has no CUDA device type");
  auto* device = reinterpret_cast<AVHWDeviceContext*>(ref->data);
  auto* cuda = static_cast<AVCUDADeviceContext*>(device->hwctx);
  cuda->cuda_ctx = static_cast<CUcontext>(cuda_context);
  cuda->stream = nullptr;  // the legacy default stream, which mmprof's kernels use too
  if (const int err = av_hwdevice_ctx_init(ref); err < 0) {
    av_buffer_unref(&ref);
    throw UnavailableError("FFmpeg cannot use CUDA device 0 for NVDEC: " + av_error_string(err) +
                           ffmpeg_error_suffix());
  }
  ref_ = ref;
}

CudaDevice::~CudaDevice() {
  auto* ref = static_cast<AVBufferRef*>(ref_);
  av_buffer_unref(&ref);
}

struct CudaJpegDecoder::Impl {
  explicit Impl(const CudaDevice& d) : device(d) {}
  const CudaDevice& device;
  AvCodecContextPtr codec;
  AvFramePtr frame{av_frame_alloc()};
  AvPacketPtr packet{av_packet_alloc()};

  void open() {
    const AVCodec* mjpeg = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
    if (mjpeg == nullptr) throw UnavailableError("this FFmpeg has no MJPEG decoder");
    codec.reset(avcodec_alloc_context3(mjpeg));
    if (!codec) throw std::bad_alloc();
    codec->hw_device_ctx = av_buffer_ref(static_cast<AVBufferRef*>(device.av_buffer()));
    codec->get_format = [](AVCodecContext* c, const AVPixelFormat* f) {
      return static_cast<AVPixelFormat>(pick_cuda_format(c, reinterpret_cast<const int*>(f)));
    };
    if (const int err = avcodec_open2(codec.get(), mjpeg, nullptr); err < 0) {
      throw UnavailableError("FFmpeg cannot open its MJPEG decoder on CUDA: " +
                             av_error_string(err));
    }
  }
};

CudaJpegDecoder::CudaJpegDecoder(const CudaDevice& device) : impl_(std::make_unique<Impl>(device)) {
  if (!impl_->frame || !impl_->packet) throw std::bad_alloc();
  impl_->open();
}

CudaJpegDecoder::~CudaJpegDecoder() = default;

DeviceFrame CudaJpegDecoder::decode(std::span<const uint8_t> jpeg) {
  Impl& m = *impl_;
  clear_ffmpeg_error();
  av_frame_unref(m.frame.get());
  // The packet borrows the bytes: FFmpeg copies what it keeps of a non-refcounted packet.
  m.packet->data = const_cast<uint8_t*>(jpeg.data());
  m.packet->size = static_cast<int>(jpeg.size());
  int err = avcodec_send_packet(m.codec.get(), m.packet.get());
  m.packet->data = nullptr;
  m.packet->size = 0;
  if (err >= 0) err = avcodec_receive_frame(m.codec.get(), m.frame.get());
  if (err < 0) {
    m.open();  // a context that failed starts afresh for the next JPEG
    throw NotOnDevice("NVDEC could not decode it: " + av_error_string(err) + ffmpeg_error_suffix());
  }
  DeviceFrame frame = device_frame_of(m.frame.get());
  frame.full_range = true;  // JFIF's YCbCr spans 0..255 whatever the frame's tag says
  return frame;
}

}  // namespace mmprof
