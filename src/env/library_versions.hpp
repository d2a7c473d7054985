#pragma once
// Versions of the toolchain and the libraries mmprof links, each with where the figure came
// from ("runtime": asked of the loaded library; "build": a header or CMake at compile time). The
// only file of the env layer that includes FFmpeg, libarchive, libjpeg-turbo and glibc headers.
#include <nlohmann/json.hpp>

namespace mmprof::env {

nlohmann::json compiler_version();
nlohmann::json libc_version();
nlohmann::json ffmpeg_version();
nlohmann::json libjpeg_turbo_version();
nlohmann::json libarchive_version();
// The torch step plugin: whether its file exists (it is never loaded here: DESIGN.md keeps
// libtorch's 0.7 s start-up out of every command but a torch step) and the libtorch version
// CMake found at build time.
nlohmann::json libtorch_version();

}  // namespace mmprof::env
