#pragma once
// Versions of the toolchain, glibc and libtorch, each with where the figure came from ("runtime":
// asked of the loaded library; "build": a header or CMake at compile time). The libraries a
// layer owns give their own: decode/library_versions.hpp (FFmpeg, libjpeg-turbo),
// data/tar_index.hpp (libarchive), gpu/cuda_info.hpp (CUDA, CUPTI).
#include <nlohmann/json.hpp>

namespace mmprof::env {

nlohmann::json compiler_version();
nlohmann::json libc_version();
// The torch step plugin: whether its file exists (it is never loaded here: DESIGN.md keeps
// libtorch's 0.7 s start-up out of every command but a torch step) and the libtorch version
// CMake found at build time.
nlohmann::json libtorch_version();

}  // namespace mmprof::env
