#include "decode/webp_frame.hpp"

#include <cstring>
#include <string_view>

#include "decode/decode_error.hpp"

namespace mmprof::detail {
namespace {

// RIFF chunk: fourcc, little-endian 32-bit payload size, payload padded to an even size.
struct Chunk {
  std::string_view fourcc;
  std::span<const uint8_t> payload;
  std::span<const uint8_t> whole;  // header + payload + padding, as stored
};

uint32_t le24(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
}

uint32_t le32(const uint8_t* p) {
  return le24(p) | uint32_t{p[3]} << 24;
}

void put_le32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

[[noreturn]] void damaged(const char* what) {
  throw DecodeError(std::string("corrupt webp data: animated WebP ") + what);
}

// The chunks of `data` in order; a chunk running past the end is damage.
template <typename Visit>
void for_each_chunk(std::span<const uint8_t> data, Visit&& visit) {
  for (size_t at = 0; at + 8 <= data.size();) {
    const uint32_t size = le32(data.data() + at + 4);
    if (size > data.size() - at - 8) damaged("with a chunk cut short");
    const size_t whole = 8 + size + (size & 1);
    const Chunk c{std::string_view(reinterpret_cast<const char*>(data.data() + at), 4),
                  data.subspan(at + 8, size), data.subspan(at, std::min(whole, data.size() - at))};
    if (!visit(c)) return;
    at += whole;
  }
}

}  // namespace

std::optional<WebpFrame> first_webp_frame(std::span<const uint8_t> bytes,
                                          std::vector<uint8_t>& still) {
  constexpr uint8_t kAnimation = 0x02, kAlpha = 0x10;
  if (bytes.size() < 30 || std::memcmp(bytes.data(), "RIFF", 4) != 0 ||
      std::memcmp(bytes.data() + 8, "WEBPVP8X", 8) != 0 || (bytes[20] & kAnimation) == 0) {
    return std::nullopt;
  }
  WebpFrame frame;
  frame.canvas_width = static_cast<int>(le24(bytes.data() + 24) + 1);
  frame.canvas_height = static_cast<int>(le24(bytes.data() + 27) + 1);
  std::span<const uint8_t> alpha, image;
  bool found = false;
  for_each_chunk(bytes.subspan(12), [&](const Chunk& c) {
    if (c.fourcc != "ANMF") return true;
    if (c.payload.size() < 16) damaged("with a frame header cut short");
    const uint8_t* p = c.payload.data();
    frame.x = static_cast<int>(le24(p) * 2);
    frame.y = static_cast<int>(le24(p + 3) * 2);
    frame.width = static_cast<int>(le24(p + 6) + 1);
    frame.height = static_cast<int>(le24(p + 9) + 1);
    for_each_chunk(c.payload.subspan(16), [&](const Chunk& sub) {
      if (sub.fourcc == "ALPH") alpha = sub.whole;
      if (sub.fourcc == "VP8 " || sub.fourcc == "VP8L") image = sub.whole;
      return image.empty();
    });
    found = true;
    return false;
  });
  if (!found || image.empty()) damaged("with no frame");
  // A still WebP: the bitstream chunk alone, or VP8X (alpha flag, the frame's size) + ALPH + VP8.
  const bool with_alpha = !alpha.empty() && std::memcmp(image.data(), "VP8 ", 4) == 0;
  still.assign({'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'});
  if (with_alpha) {
    const uint8_t vp8x[18] = {'V',
                              'P',
                              '8',
                              'X',
                              10,
                              0,
                              0,
                              0,
                              kAlpha,
                              0,
                              0,
                              0,
                              static_cast<uint8_t>(frame.width - 1),
                              static_cast<uint8_t>((frame.width - 1) >> 8),
                              static_cast<uint8_t>((frame.width - 1) >> 16),
                              static_cast<uint8_t>(frame.height - 1),
                              static_cast<uint8_t>((frame.height - 1) >> 8),
                              static_cast<uint8_t>((frame.height - 1) >> 16)};
    still.insert(still.end(), vp8x, vp8x + sizeof vp8x);
    still.insert(still.end(), alpha.begin(), alpha.end());
  }
  still.insert(still.end(), image.begin(), image.end());
  if (still.size() % 2 != 0) still.push_back(0);
  put_le32(still, 4, static_cast<uint32_t>(still.size() - 8));
  return frame;
}

}  // namespace mmprof::detail
