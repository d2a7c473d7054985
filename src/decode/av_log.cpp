#include "decode/av_log.hpp"

#include <cstdarg>
#include <cstring>
#include <mutex>

extern "C" {
#include <libavutil/log.h>
}

namespace mmprof::detail {
namespace {

// A fixed buffer per thread: recording a message never allocates.
thread_local char last_error[256] = {};

void log_callback(void* avcl, int level, const char* fmt, va_list args) {
  if (level <= AV_LOG_FATAL) {
    av_log_default_callback(avcl, level, fmt, args);
    return;
  }
  if (level > AV_LOG_ERROR) return;
  int print_prefix = 1;
  av_log_format_line2(avcl, level, fmt, args, last_error, sizeof last_error, &print_prefix);
  // FFmpeg lines end in '\n'; the message is embedded in a sentence.
  const size_t n = std::strlen(last_error);
  if (n > 0 && last_error[n - 1] == '\n') last_error[n - 1] = '\0';
}

}  // namespace

void quiet_ffmpeg_log() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    av_log_set_level(AV_LOG_ERROR);
    av_log_set_callback(log_callback);
  });
}

void clear_ffmpeg_error() noexcept {
  last_error[0] = '\0';
}

std::string ffmpeg_error_suffix() {
  if (last_error[0] == '\0') return {};
  return std::string(" (") + last_error + ")";
}

}  // namespace mmprof::detail
