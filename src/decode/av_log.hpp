#pragma once
// FFmpeg's log, tamed for worker processes: nothing below AV_LOG_FATAL reaches stderr (a corrupt
// sample would otherwise print a line per macroblock), but the last error-level message of the
// calling thread is kept so that exceptions can still say what FFmpeg complained about.
#include <string>

namespace mmprof::detail {

// Installs the quiet log callback; idempotent and thread-safe (std::call_once).
void quiet_ffmpeg_log() noexcept;

// Forgets the calling thread's last FFmpeg error message.
void clear_ffmpeg_error() noexcept;

// " (<message>)" for the calling thread's last FFmpeg error message since clear_ffmpeg_error(),
// or "" when there was none: appended to DecodeError messages.
std::string ffmpeg_error_suffix();

}  // namespace mmprof::detail
