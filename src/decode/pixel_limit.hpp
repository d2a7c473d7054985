#pragma once
// The decompression-bomb guard: a picture whose header claims more pixels than the configured
// limit is refused before any buffer for it is allocated (PIL's DecompressionBombError idea).
#include <cstdint>
#include <string>

namespace mmprof {

// The default of image.max_pixels and video.max_pixels: PIL raises DecompressionBombError above
// 2 x Image.MAX_IMAGE_PIXELS (2 x 89,478,485).
inline constexpr int64_t kDefaultMaxPixels = 178'956'970;

// Throws DecodeError("<what> is WxH = N pixels, above <limit_key>=L: refused from its header")
// when width x height exceeds `limit` (a limit <= 0 means none).
void check_pixel_limit(int64_t width, int64_t height, int64_t limit, const std::string& what,
                       const char* limit_key);

}  // namespace mmprof
