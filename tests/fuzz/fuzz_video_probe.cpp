// libFuzzer target: video probing (libavformat from memory, stream selection, completeness and
// pixel-limit checks, decoder opening).
#include <cstddef>
#include <cstdint>
#include <span>

#include "decode/decode_error.hpp"
#include "decode/video_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mmprof::VideoDecoder decoder(1, 1 << 20);
  try {
    decoder.open(std::span<const uint8_t>(data, size));
  } catch (const mmprof::DecodeError&) {
  }
  decoder.close();
  return 0;
}
