#include "decode/library_versions.hpp"

#include <fmt/format.h>

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

namespace mmprof::decode {
namespace {

using nlohmann::json;

std::string av_triplet(unsigned v) {
  return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

#define MMPROF_STRINGIFY2(x) #x
#define MMPROF_STRINGIFY(x) MMPROF_STRINGIFY2(x)

}  // namespace

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

}  // namespace mmprof::decode
