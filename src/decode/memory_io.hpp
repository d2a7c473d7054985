#pragma once
// libavformat reading from a byte span instead of a file: a custom AVIOContext with read and seek
// callbacks (AVSEEK_SIZE included, so demuxers that look at the end of the file, as MP4's
// moov-at-end layout needs, work). The bytes are not copied beyond avio's own buffer.
#include <cstdint>
#include <span>
#include <string>

#include "decode/av_handles.hpp"

namespace mmprof::detail {

class MemoryInput {
 public:
  // Points the reader at `bytes` (which must outlive every read) and rewinds it.
  void reset(std::span<const uint8_t> bytes) noexcept {
    bytes_ = bytes;
    pos_ = 0;
  }
  // A new AVIOContext reading this input (one per opened AVFormatContext, which it must outlive).
  // Throws std::bad_alloc when FFmpeg cannot allocate.
  AvioPtr make_avio();
  // Opens a demuxer on this input, probing among the demuxers of `whitelist` (libavformat short
  // names, "mov,matroska,avi"). Returns null and leaves the error in *err when libavformat
  // refuses the data.
  AvFormatPtr open_format(AVIOContext* avio, const std::string& whitelist, int* err);

 private:
  static int read(void* opaque, uint8_t* buf, int size);
  static int64_t seek(void* opaque, int64_t offset, int whence);
  std::span<const uint8_t> bytes_;
  int64_t pos_ = 0;
};

}  // namespace mmprof::detail
