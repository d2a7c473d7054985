// libFuzzer target: image header probing (magic numbers, JPEG and PNG headers, the pixel limit,
// FFmpeg's image decoders for the other formats).
#include <cstddef>
#include <cstdint>
#include <span>

#include "decode/decode_error.hpp"
#include "decode/image_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A small pixel limit keeps each input's memory bounded, as image.max_pixels does in a run.
  static mmprof::ImageDecoder decoder(1 << 22);
  try {
    const mmprof::ImageInfo info = decoder.probe(std::span<const uint8_t>(data, size));
    if (info.width <= 0 || info.height <= 0 ||
        static_cast<int64_t>(info.width) * info.height > (1 << 22)) {
      __builtin_trap();  // a probe that succeeds describes a real, allowed picture
    }
  } catch (const mmprof::DecodeError&) {
  }
  return 0;
}
