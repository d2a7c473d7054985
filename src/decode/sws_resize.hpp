#pragma once
// The swscale alternative to mmprof's Resizer (image.resizer=swscale): crop and resize packed RGB24
// in one sws_scale call with FFmpeg's bilinear filter, whose support widens on downscale as
// PIL's antialiasing does. The context is cached and rebuilt only when the crop size changes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transform/crop.hpp"

namespace mmprof {

class SwsResizer {
 public:
  static constexpr size_t kSlack = 64;

  SwsResizer();
  ~SwsResizer();
  SwsResizer(const SwsResizer&) = delete;
  SwsResizer& operator=(const SwsResizer&) = delete;

  // The same contract as Resizer::resize, except that src must stay readable for kSlack bytes
  // past the crop's last row: swscale's SIMD readers load whole vectors. Throws
  // std::runtime_error when swscale refuses the sizes.
  void resize(const uint8_t* src, int src_stride, const CropRect& crop, uint8_t* dst, int dst_w,
              int dst_h);
  // Frees the scratch buffer (loader.buffer_reuse=false).
  void release() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof
