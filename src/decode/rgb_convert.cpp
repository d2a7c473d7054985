#include "decode/rgb_convert.hpp"

#include <cstring>

namespace mmprof::detail {

bool sws_to_rgb24(SwsContext* sws, const uint8_t* const src[4], const int src_stride[4], int src_h,
                  uint8_t* dst, int dst_w, int dst_h, std::vector<uint8_t>& scratch) {
  const size_t row = static_cast<size_t>(dst_w) * 3;
  // Room for a block of 16 more pixels per row, 64-byte aligned rows, and one spare row of slack.
  const int stride = static_cast<int>((row + 48 + 63) / 64 * 64);
  const size_t need = static_cast<size_t>(stride) * (dst_h + 1);
  if (scratch.size() < need) scratch.resize(need);
  uint8_t* planes[4] = {scratch.data(), nullptr, nullptr, nullptr};
  const int strides[4] = {stride, 0, 0, 0};
  if (sws_scale(sws, src, src_stride, 0, src_h, planes, strides) != dst_h) return false;
  for (int y = 0; y < dst_h; ++y) {
    std::memcpy(dst + y * row, scratch.data() + static_cast<size_t>(y) * stride, row);
  }
  return true;
}

}  // namespace mmprof::detail
