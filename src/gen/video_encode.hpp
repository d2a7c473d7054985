#pragma once
// H.264 (libx264) in MP4, encoded entirely in memory so that one encode can be written to both
// layouts. Keeps FFmpeg types out of the header.
#include <cstdint>
#include <functional>
#include <vector>

#include "gen/sample_plan.hpp"
#include "gen/video_synth.hpp"

namespace mmprof::gen {

// Encodes params.frames frames drawn by `render` as yuv420p H.264 at params.fps with a keyframe
// every params.keyframe_interval_s seconds exactly (scene-cut detection off), single-threaded so
// the bytes depend only on the inputs. Writes the whole MP4 (moov at the end) into `out`.
void encode_mp4(const VideoParams& params, const std::function<void(int, const YuvView&)>& render,
                std::vector<uint8_t>& out);

}  // namespace mmprof::gen
