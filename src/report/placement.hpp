#pragma once
// Decode placement (docs/gpu.md): for an `mmprof ab` whose arms move decode (decode.device,
// image/video.decode_device, decode.gpu_backend), what each arm's trials measured besides speed:
// the CPU cores of the loader's processes (workers and main) in the measured phase, the main
// process's decode per batch, the samples handed back to the CPU, NVML's decoder and SM
// utilisation, and how much the training step's compute grew beside the loader. Against the
// base: CPU cores freed, and GPU time taken from training.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace mmprof::report {

// Keys whose values place decode.
bool is_placement_key(const std::string& key);

// {"arms": [base first, then each placement arm: its figures as medians over complete trials,
// and for an arm its cores_freed and verdict]}; null when the experiment varies no placement key.
nlohmann::json decode_placement(const nlohmann::json& experiment, const std::filesystem::path& dir);

}  // namespace mmprof::report
