#pragma once
// Whether a sample is a still image or a video clip: the dataset index's and the media-format
// table's (src/decode/media_format.hpp) common word for it.
#include <cstdint>

namespace mmprof {

enum class Modality : uint8_t { image = 0, video = 1 };

constexpr const char* modality_name(Modality m) noexcept {
  return m == Modality::video ? "video" : "image";
}

}  // namespace mmprof
