#include "env/library_versions.hpp"

#include <archive.h>
#include <fmt/format.h>
#include <gnu/libc-version.h>

#include <cstdlib>
#include <system_error>

#include "step/torch_plugin.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
}

#if __has_include(<jconfig.h>)
#include <jconfig.h>

#include <cstdio>  // jpeglib's jconfig.h expects FILE and size_t to be declared
#endif

namespace mmprof::env {
namespace {

using nlohmann::json;

std::string av_triplet(unsigned v) {
  return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

#define MMPROF_STRINGIFY2(x) #x
#define MMPROF_STRINGIFY(x) MMPROF_STRINGIFY2(x)

}  // namespace

json compiler_version() {
#if defined(__clang__)
  return {
      {"name", "clang"}, {"version", __clang_version__}, {"source", "build: __clang_version__"}};
#elif defined(__GNUC__)
  return {{"name", "gcc"}, {"version", __VERSION__}, {"source", "build: __VERSION__"}};
#else
  return {{"name", nullptr}, {"version", nullptr}, {"reason", "unknown compiler"}};
#endif
}

json libc_version() {
  return {{"name", "glibc"},
          {"version", gnu_get_libc_version()},
          {"source", "runtime: gnu_get_libc_version()"}};
}

json ffmpeg_version() {
  return {{"version", av_version_info()},
          {"libavcodec", av_triplet(avcodec_version())},
          {"libavformat", av_triplet(avformat_version())},
          {"libavutil", av_triplet(avutil_version())},
          {"libswscale", av_triplet(swscale_version())},
          {"source", "runtime: av_version_info(), av*_version()"}};
}

json libjpeg_turbo_version() {
#ifdef LIBJPEG_TURBO_VERSION
  // TurboJPEG 2.x has no run-time version call; libjpeg-turbo's own jconfig.h is the header of
  // the same source package as the libturbojpeg mmprof links.
  return {{"version", MMPROF_STRINGIFY(LIBJPEG_TURBO_VERSION)},
          {"source", "build: jconfig.h LIBJPEG_TURBO_VERSION"}};
#else
  return {{"version", nullptr},
          {"reason",
           "jconfig.h does not define LIBJPEG_TURBO_VERSION and TurboJPEG 2.x has no "
           "run-time version call"}};
#endif
}

json libarchive_version() {
  return {{"version", archive_version_string()}, {"source", "runtime: archive_version_string()"}};
}

json libtorch_version() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  json searched = json::array();
  json found;
  for (const auto& path : torch_plugin_candidates(std::getenv(kTorchPluginEnv), exe.parent_path(),
                                                  torch_plugin_install_reldir(), nullptr)) {
    searched.push_back(path.string());
    if (found.is_null() && std::filesystem::exists(path, ec)) found = path.string();
  }
  json r = {{"plugin", found}, {"plugin_searched", searched}};
#ifdef MMPROF_TORCH_VERSION
  r["version"] = MMPROF_TORCH_VERSION;
  r["source"] = "build: CMake Torch_VERSION (libtorch itself is not loaded to ask)";
#else
  r["version"] = nullptr;
  r["reason"] = "mmprof was built without libtorch";
#endif
  return r;
}

}  // namespace mmprof::env
