#include "decode/memory_io.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

namespace mmprof::detail {
namespace {
// avio's read granularity; 64 KiB keeps the callback count low without a large copy buffer.
constexpr int kAvioBufferSize = 64 * 1024;
}  // namespace

AvioPtr MemoryInput::make_avio() {
  auto* buffer = static_cast<unsigned char*>(av_malloc(kAvioBufferSize));
  if (buffer == nullptr) throw std::bad_alloc();
  AVIOContext* avio = avio_alloc_context(buffer, kAvioBufferSize, 0, this, &MemoryInput::read,
                                         nullptr, &MemoryInput::seek);
  if (avio == nullptr) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  return AvioPtr(avio);
}

AvFormatPtr MemoryInput::open_format(AVIOContext* avio, const std::string& whitelist, int* err) {
  AVFormatContext* ctx = avformat_alloc_context();
  if (ctx == nullptr) throw std::bad_alloc();
  ctx->pb = avio;
  ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
  ctx->format_whitelist = av_strdup(whitelist.c_str());
  if (ctx->format_whitelist == nullptr) {
    avformat_free_context(ctx);
    throw std::bad_alloc();
  }
  // On failure avformat_open_input frees the context itself.
  *err = avformat_open_input(&ctx, nullptr, nullptr, nullptr);
  return AvFormatPtr(*err < 0 ? nullptr : ctx);
}

int MemoryInput::read(void* opaque, uint8_t* buf, int size) {
  auto* self = static_cast<MemoryInput*>(opaque);
  const int64_t left = static_cast<int64_t>(self->bytes_.size()) - self->pos_;
  if (left <= 0) return AVERROR_EOF;
  const int n = static_cast<int>(std::min<int64_t>(left, size));
  std::memcpy(buf, self->bytes_.data() + self->pos_, static_cast<size_t>(n));
  self->pos_ += n;
  return n;
}

int64_t MemoryInput::seek(void* opaque, int64_t offset, int whence) {
  auto* self = static_cast<MemoryInput*>(opaque);
  const auto size = static_cast<int64_t>(self->bytes_.size());
  int64_t target = 0;
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE:
      return size;
    case SEEK_SET:
      target = offset;
      break;
    case SEEK_CUR:
      target = self->pos_ + offset;
      break;
    case SEEK_END:
      target = size + offset;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (target < 0 || target > size) return AVERROR(EINVAL);
  self->pos_ = target;
  return target;
}

}  // namespace mmprof::detail
