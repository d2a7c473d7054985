#pragma once
// Moving content for the synthetic clips: a photo-like panorama that the camera pans across, soft
// discs that move and bounce, and light temporal sensor noise. Panning and moving objects give
// the encoder real motion vectors and residuals, so decode cost resembles filmed video rather
// than a static slide (which H.264 codes almost for free).
#include <cstdint>
#include <vector>

#include "gen/image_synth.hpp"
#include "gen/sample_plan.hpp"
#include "util/rng.hpp"

namespace mmprof::gen {

// A writable YUV 4:2:0 picture owned by someone else (the encoder's frame).
struct YuvView {
  int width = 0, height = 0;
  uint8_t* plane[3] = {nullptr, nullptr, nullptr};
  int stride[3] = {0, 0, 0};
};

// Per-thread buffers, reused across clips.
struct VideoSynthScratch {
  ImageSynthScratch image;
  RgbImage panorama_rgb;
  std::vector<uint8_t> plane[3];  // panorama as YUV 4:2:0 (BT.601 limited range)
};

class VideoScene {
 public:
  // Draws all random choices from `rng` and builds the panorama into `scratch`.
  VideoScene(Rng& rng, const VideoParams& params, VideoSynthScratch& scratch);
  void render(int frame_index, const YuvView& out) const;
  const ImageLook& look() const { return look_; }

 private:
  struct Disc {
    double x0, y0, vx, vy, radius;
    int yuv[3];
  };
  void draw_disc(const Disc& d, int frame_index, const YuvView& out) const;

  VideoParams params_;
  VideoSynthScratch& scratch_;
  ImageLook look_;
  int pano_w_ = 0, pano_h_ = 0;
  double pan_x0_ = 0, pan_y0_ = 0, pan_vx_ = 0, pan_vy_ = 0;  // pixels, pixels per frame
  double noise_sigma_ = 1.0;
  uint64_t noise_phase_ = 0;
  std::vector<Disc> discs_;
};

}  // namespace mmprof::gen
