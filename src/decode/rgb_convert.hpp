#pragma once
// sws_scale into a caller's packed RGB24 buffer (stride exactly width * 3). swscale's x86 code
// assumes FFmpeg-style destinations (strides padded, buffers with slack at the end): with a packed
// destination, FFmpeg 5.1's unscaled YUV->RGB24 converters skip the last width % 8 pixels of each
// row, and their 8-byte stores run past the end of the last row (both seen under valgrind). So the
// conversion writes into a padded scratch buffer and the rows are copied out.
#include <cstdint>
#include <vector>

#include "decode/av_handles.hpp"

namespace mmprof::detail {

// Returns false when sws_scale fails. `scratch` grows only.
bool sws_to_rgb24(SwsContext* sws, const uint8_t* const src[4], const int src_stride[4], int src_h,
                  uint8_t* dst, int dst_w, int dst_h, std::vector<uint8_t>& scratch);

}  // namespace mmprof::detail
