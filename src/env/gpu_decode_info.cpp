#include "env/gpu_decode_info.hpp"

#include "decode/gpu_decode_caps.hpp"
#include "gpu/nvjpeg_info.hpp"
#include "gpu/nvml.hpp"
#include "mmprof/error.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

json nvml_json(const gpu::NvmlSnapshot& s) {
  json gpus = json::array();
  for (const gpu::NvmlGpu& g : s.gpus)
    gpus.push_back(gpu::to_json(g));
  return {{"library", s.library},
          {"driver_version", s.driver_version},
          {"nvml_version", s.nvml_version},
          {"gpus", gpus}};
}

}  // namespace

json gpu_decode_info() {
  json out;
  try {
    out["nvml"] = nvml_json(gpu::nvml_snapshot());
    out["nvml_reason"] = nullptr;
  } catch (const UnavailableError& e) {
    out["nvml"] = nullptr;
    out["nvml_reason"] = e.what();
  }
  const GpuDecodeCaps caps = gpu_decode_caps();
  out["ffmpeg"] = {
      {"cuvid_decoders", caps.cuvid_decoders},
      {"nvdec_hwaccel_codecs", caps.nvdec_codecs},
      {"cuda_hwdevice", caps.cuda_hwdevice},
      {"libcuda", caps.libcuda.empty() ? json() : json(caps.libcuda)},
      {"libcuda_reason", caps.libcuda_reason.empty() ? json() : json(caps.libcuda_reason)},
      {"libnvcuvid", caps.libnvcuvid.empty() ? json() : json(caps.libnvcuvid)},
      {"libnvcuvid_reason",
       caps.libnvcuvid_reason.empty() ? json() : json(caps.libnvcuvid_reason)}};
  std::string reason;
  const auto nvjpeg = gpu::nvjpeg_version(reason);
  out["nvjpeg"] = nvjpeg ? json({{"version", *nvjpeg}}) : json();
  out["nvjpeg_reason"] = nvjpeg ? json() : json(reason);
  return out;
}

void add_decode_engines(json& gpus, const json& nvml) {
  if (!gpus.is_array()) return;
  for (size_t i = 0; i < gpus.size(); ++i) {
    json nvdec = nullptr, nvjpg = nullptr;
    if (nvml.is_object() && i < nvml["gpus"].size()) {
      nvdec = nvml["gpus"][i]["nvdec_engines"];
      nvjpg = nvml["gpus"][i]["nvjpg_engines"];
    }
    gpus[i]["nvdec_engines"] = nvdec;
    gpus[i]["nvjpg_engines"] = nvjpg;
    gpus[i]["nvdec"] = nvdec.is_number() ? json(nvdec.get<int>() > 0) : json();
  }
}

}  // namespace mmprof::env
