#pragma once
// The inventory's facts on decode placed on a GPU: NVML's view of each GPU (engines, utilisation,
// memory, driver), this FFmpeg's NVIDIA decoders and whether the driver loads, and nvJPEG. Each
// absent part is null with a reason beside it. docs/gpu.md.
#include <nlohmann/json.hpp>

namespace mmprof::env {

// {"nvml", "nvml_reason", "ffmpeg", "nvjpeg", "nvjpeg_reason"}.
nlohmann::json gpu_decode_info();

// Adds NVML's engine counts to the inventory's hardware.gpus entries (matched by index):
// nvdec_engines, nvjpg_engines and nvdec (true when it has an NVDEC engine), null when unknown.
void add_decode_engines(nlohmann::json& gpus, const nlohmann::json& nvml);

}  // namespace mmprof::env
