#pragma once
// What this FFmpeg build offers for decode on an NVIDIA GPU: its *_cuvid decoders, the codecs
// whose native decoder has a CUDA (NVDEC) hwaccel, and whether the driver's libcuda loads.
// Asks without creating a CUDA context, so the inventory is safe before the loader forks.
#include <string>
#include <vector>

namespace mmprof {

struct GpuDecodeCaps {
  std::vector<std::string> cuvid_decoders;    // "h264_cuvid", ...
  std::vector<std::string> nvdec_codecs;      // "h264", "mjpeg", ...: hwaccel through CUDA
  bool cuda_hwdevice = false;                 // FFmpeg was built with the CUDA device type
  std::string libcuda;                        // the driver library that loaded, or empty
  std::string libcuda_reason;                 // why none loaded
  std::string libnvcuvid, libnvcuvid_reason;  // the driver's NVDEC library, which FFmpeg loads
};

GpuDecodeCaps gpu_decode_caps();

}  // namespace mmprof
