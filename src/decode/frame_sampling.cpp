// sample_frame_times (declared in video_decoder.hpp): pure arithmetic on VideoInfo, no FFmpeg.
#include <algorithm>
#include <cmath>

#include "decode/video_decoder.hpp"

namespace mmprof {

void sample_frame_times(const VideoInfo& info, int k, FrameSampling mode, Rng& rng,
                        std::vector<double>& out) {
  out.clear();
  if (k <= 0) return;
  const double duration = std::max(info.duration_s, 0.0);
  if (mode == FrameSampling::random_window && info.fps > 0) {
    // K consecutive frames at 1/fps from a random first frame; a clip shorter than K frames
    // repeats its last frame rather than asking for times past the end.
    const int64_t n =
        info.frames > 0 ? info.frames : std::max<int64_t>(1, std::llround(duration * info.fps));
    const int64_t first = rng.range(0, std::max<int64_t>(0, n - k));
    for (int i = 0; i < k; ++i) {
      out.push_back(static_cast<double>(std::min<int64_t>(first + i, n - 1)) / info.fps);
    }
    return;
  }
  // Centres of K equal segments of [0, duration), as TSN-style uniform sampling.
  for (int i = 0; i < k; ++i)
    out.push_back((i + 0.5) * duration / k);
}

}  // namespace mmprof
