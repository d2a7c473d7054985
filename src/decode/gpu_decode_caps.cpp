#include "decode/gpu_decode_caps.hpp"

#include <dlfcn.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
}

#include <string_view>

namespace mmprof {

GpuDecodeCaps gpu_decode_caps() {
  GpuDecodeCaps caps;
  void* it = nullptr;
  while (const AVCodec* c = av_codec_iterate(&it)) {
    if (av_codec_is_decoder(c) == 0) continue;
    if (std::string_view(c->name).ends_with("_cuvid")) {
      caps.cuvid_decoders.emplace_back(c->name);
      continue;  // the NVDEC-only decoders; nvdec_codecs are FFmpeg's own with a CUDA hwaccel
    }
    for (int i = 0;; ++i) {
      const AVCodecHWConfig* hw = avcodec_get_hw_config(c, i);
      if (hw == nullptr) break;
      if (hw->device_type == AV_HWDEVICE_TYPE_CUDA &&
          (hw->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0) {
        caps.nvdec_codecs.emplace_back(c->name);
        break;
      }
    }
  }
  for (auto t = av_hwdevice_iterate_types(AV_HWDEVICE_TYPE_NONE); t != AV_HWDEVICE_TYPE_NONE;
       t = av_hwdevice_iterate_types(t)) {
    caps.cuda_hwdevice = caps.cuda_hwdevice || t == AV_HWDEVICE_TYPE_CUDA;
  }
  // FFmpeg loads the driver itself when it makes the device and the decoder; this only asks
  // whether it could (a container without NVIDIA's "video" capability lacks libnvcuvid).
  const auto loads = [](const char* file, std::string& found, std::string& reason) {
    if (void* lib = dlopen(file, RTLD_LAZY | RTLD_LOCAL)) {
      found = file;
      dlclose(lib);
    } else {
      reason = dlerror();
    }
  };
  loads("libcuda.so.1", caps.libcuda, caps.libcuda_reason);
  loads("libnvcuvid.so.1", caps.libnvcuvid, caps.libnvcuvid_reason);
  return caps;
}

}  // namespace mmprof
