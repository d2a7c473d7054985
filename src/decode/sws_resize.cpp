#include "decode/sws_resize.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "decode/av_handles.hpp"
#include "decode/rgb_convert.hpp"

namespace mmprof {

using detail::SwsPtr;

struct SwsResizer::Impl {
  SwsPtr sws;
  std::vector<uint8_t> scratch;  // sws_to_rgb24's padded destination
};

SwsResizer::SwsResizer() : impl_(std::make_unique<Impl>()) {}
SwsResizer::~SwsResizer() = default;

void SwsResizer::resize(const uint8_t* src, int src_stride, const CropRect& crop, uint8_t* dst,
                        int dst_w, int dst_h) {
  impl_->sws.reset(sws_getCachedContext(impl_->sws.release(), crop.w, crop.h, AV_PIX_FMT_RGB24,
                                        dst_w, dst_h, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr,
                                        nullptr, nullptr));
  if (!impl_->sws) {
    throw std::runtime_error(
        fmt::format("swscale cannot resize a {}x{} crop to {}x{}", crop.w, crop.h, dst_w, dst_h));
  }
  const uint8_t* planes[4] = {
      src + static_cast<size_t>(crop.y) * src_stride + static_cast<size_t>(crop.x) * 3, nullptr,
      nullptr, nullptr};
  const int strides[4] = {src_stride, 0, 0, 0};
  if (!detail::sws_to_rgb24(impl_->sws.get(), planes, strides, crop.h, dst, dst_w, dst_h,
                            impl_->scratch)) {
    throw std::runtime_error(fmt::format("sws_scale failed on a {}x{} crop", crop.w, crop.h));
  }
}

void SwsResizer::release() noexcept {
  std::vector<uint8_t>().swap(impl_->scratch);
}

}  // namespace mmprof
