#pragma once
// The versions of FFmpeg and libjpeg-turbo that decode with, for the manifest's software block:
// each with where the figure came from ("runtime": asked of the loaded library; "build": a header
// at compile time).
#include <nlohmann/json.hpp>

namespace mmprof::decode {

nlohmann::json ffmpeg_version();
nlohmann::json libjpeg_turbo_version();

}  // namespace mmprof::decode
