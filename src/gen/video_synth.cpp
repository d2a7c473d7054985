#include "gen/video_synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mmprof::gen {
namespace {

// BT.601 limited range, integer form (what x264 assumes for untagged yuv420p).
void rgb_to_yuv(int r, int g, int b, int yuv[3]) {
  yuv[0] = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16;
  yuv[1] = ((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128;
  yuv[2] = ((112 * r - 94 * g - 18 * b + 128) >> 8) + 128;
}

void rgb_to_yuv420(const RgbImage& rgb, std::vector<uint8_t> (&planes)[3]) {
  const int w = rgb.width, h = rgb.height, cw = w / 2, ch = h / 2;
  planes[0].resize(static_cast<size_t>(w) * h);
  planes[1].resize(static_cast<size_t>(cw) * ch);
  planes[2].resize(static_cast<size_t>(cw) * ch);
  for (int y = 0; y < h; ++y) {
    const uint8_t* p = rgb.pixels.data() + static_cast<size_t>(y) * w * 3;
    uint8_t* out = planes[0].data() + static_cast<size_t>(y) * w;
    for (int x = 0; x < w; ++x) {
      out[x] = static_cast<uint8_t>(
          ((66 * p[3 * static_cast<size_t>(x)] + 129 * p[3 * static_cast<size_t>(x) + 1] +
            25 * p[3 * static_cast<size_t>(x) + 2] + 128) >>
           8) +
          16);
    }
  }
  for (int y = 0; y < ch; ++y) {
    const uint8_t* a = rgb.pixels.data() + static_cast<size_t>(2 * y) * w * 3;
    const uint8_t* b = a + static_cast<size_t>(w) * 3;
    for (int x = 0; x < cw; ++x) {
      int s[3];
      for (int k = 0; k < 3; ++k)
        s[k] = (a[6 * x + k] + a[6 * x + 3 + k] + b[6 * x + k] + b[6 * x + 3 + k] + 2) / 4;
      int yuv[3];
      rgb_to_yuv(s[0], s[1], s[2], yuv);
      planes[1][static_cast<size_t>(y) * cw + x] = clamp8(yuv[1]);
      planes[2][static_cast<size_t>(y) * cw + x] = clamp8(yuv[2]);
    }
  }
}

// Position of a point bouncing between lo and hi (a triangle wave), for the moving discs.
double bounce(double p, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  double t = std::fmod(p - lo, 2 * span);
  if (t < 0) t += 2 * span;
  return lo + (t <= span ? t : 2 * span - t);
}

int even_floor(double v) {
  return 2 * static_cast<int>(std::floor(v / 2.0));
}

}  // namespace

VideoScene::VideoScene(Rng& rng, const VideoParams& p, VideoSynthScratch& scratch)
    : params_(p), scratch_(scratch) {
  const double scale = p.height / 360.0;
  // A camera pan of 15-90 px/s at 360p (scaled with height), capped so the panorama stays within
  // 1.5x the frame width and height.
  const double speed = rng.uniform(15.0, 90.0) * scale / p.fps;
  const double angle = rng.uniform(0, 2 * M_PI);
  const double span = std::max(1, p.frames - 1);
  pan_vx_ = std::clamp(speed * std::cos(angle), -0.5 * p.width / span, 0.5 * p.width / span);
  pan_vy_ = std::clamp(speed * std::sin(angle), -0.5 * p.height / span, 0.5 * p.height / span);
  pan_x0_ = pan_vx_ < 0 ? -pan_vx_ * span : 0;
  pan_y0_ = pan_vy_ < 0 ? -pan_vy_ * span : 0;
  pano_w_ = p.width + 2 * static_cast<int>(std::ceil(std::fabs(pan_vx_) * span / 2.0)) + 2;
  pano_h_ = p.height + 2 * static_cast<int>(std::ceil(std::fabs(pan_vy_) * span / 2.0)) + 2;
  look_ = synthesize_image(rng, pano_w_, pano_h_, scratch.image, scratch.panorama_rgb);
  rgb_to_yuv420(scratch.panorama_rgb, scratch.plane);
  const int discs = static_cast<int>(rng.range(1, 4));
  for (int i = 0; i < discs; ++i) {
    Disc d{};
    d.radius = p.height * rng.uniform(0.04, 0.15);
    d.x0 = rng.uniform(0, p.width), d.y0 = rng.uniform(0, p.height);
    const double v = p.height * rng.uniform(0.05, 0.4) / p.fps, a = rng.uniform(0, 2 * M_PI);
    d.vx = v * std::cos(a), d.vy = v * std::sin(a);
    rgb_to_yuv(static_cast<int>(rng.range(0, 255)), static_cast<int>(rng.range(0, 255)),
               static_cast<int>(rng.range(0, 255)), d.yuv);
    discs_.push_back(d);
  }
  look_.shapes += discs;
  noise_sigma_ = rng.uniform(0.5, 1.5);
  noise_phase_ = rng.next();
}

void VideoScene::render(int frame_index, const YuvView& out) const {
  const int ox = std::max(0, even_floor(pan_x0_ + pan_vx_ * frame_index));
  const int oy = std::max(0, even_floor(pan_y0_ + pan_vy_ * frame_index));
  for (int k = 0; k < 3; ++k) {
    const int shift = k == 0 ? 0 : 1, pw = k == 0 ? pano_w_ : pano_w_ / 2;
    const int w = out.width >> shift, h = out.height >> shift;
    for (int y = 0; y < h; ++y) {
      const uint8_t* src =
          scratch_.plane[k].data() + static_cast<size_t>((oy >> shift) + y) * pw + (ox >> shift);
      std::memcpy(out.plane[k] + static_cast<size_t>(y) * out.stride[k], src, w);
    }
  }
  for (const auto& d : discs_)
    draw_disc(d, frame_index, out);
  for (int y = 0; y < out.height; ++y) {
    const uint64_t phase = noise_phase_ + (static_cast<uint64_t>(frame_index) << 20) + y;
    add_sensor_noise(out.plane[0] + static_cast<size_t>(y) * out.stride[0], out.width, noise_sigma_,
                     phase);
  }
}

void VideoScene::draw_disc(const Disc& d, int frame_index, const YuvView& out) const {
  const double cx = bounce(d.x0 + d.vx * frame_index, d.radius, out.width - d.radius);
  const double cy = bounce(d.y0 + d.vy * frame_index, d.radius, out.height - d.radius);
  for (int k = 0; k < 3; ++k) {
    const double s = k == 0 ? 1.0 : 0.5, r = d.radius * s, x = cx * s, y = cy * s;
    const int w = k == 0 ? out.width : out.width / 2, h = k == 0 ? out.height : out.height / 2;
    const int x0 = std::max(0, static_cast<int>(x - r)),
              x1 = std::min(w, static_cast<int>(x + r) + 1);
    const int y0 = std::max(0, static_cast<int>(y - r)),
              y1 = std::min(h, static_cast<int>(y + r) + 1);
    for (int py = y0; py < y1; ++py) {
      uint8_t* row = out.plane[k] + static_cast<size_t>(py) * out.stride[k];
      const double dy = py + 0.5 - y;
      for (int px = x0; px < x1; ++px) {
        const double dx = px + 0.5 - x, dist = std::sqrt(dx * dx + dy * dy);
        // A 2-pixel soft edge; inside, the disc keeps a quarter of the texture beneath it.
        const int a = static_cast<int>(std::clamp((r - dist) / (2.0 * s), 0.0, 1.0) * 256.0);
        if (a == 0) continue;
        const int target = d.yuv[k] + (row[px] - 128) / 4;
        row[px] = clamp8(row[px] + (((target - row[px]) * a) >> 8));
      }
    }
  }
}

}  // namespace mmprof::gen
