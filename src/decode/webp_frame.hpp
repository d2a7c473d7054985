#pragma once
// The first frame of an animated WebP, which FFmpeg 5.1's WebP decoder refuses (it reads still
// images only). Like PIL (libwebp's WebPAnimDecoder), the image is the canvas with the first
// frame drawn at its offset: the ANMF chunk's frame data (ALPH + VP8, or VP8L) is rewrapped as a
// still WebP for the decoder, and the caller places the decoded frame on a black canvas (PIL's
// canvas starts transparent black; converting to RGB drops the alpha). Pure parsing of the RIFF
// container; nothing here decodes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mmprof::detail {

struct WebpFrame {
  int canvas_width = 0, canvas_height = 0;
  int x = 0, y = 0;           // where the frame goes on the canvas
  int width = 0, height = 0;  // the frame's size, as its ANMF chunk says
};

// For an animated WebP (VP8X with the animation flag): writes the first frame as a still WebP
// into `still` and says where it goes. nullopt for any other data (still WebPs decode as they
// are). Throws DecodeError for an animated WebP whose chunks are cut or hold no frame.
std::optional<WebpFrame> first_webp_frame(std::span<const uint8_t> bytes,
                                          std::vector<uint8_t>& still);

}  // namespace mmprof::detail
