#pragma once
// Clips in MP4 (H.264, VP9 or MPEG-4 Part 2), encoded entirely in memory so that one encode can be
// written to both layouts. Keeps FFmpeg types out of the header.
#include <cstdint>
#include <functional>
#include <vector>

#include "gen/sample_plan.hpp"
#include "gen/video_synth.hpp"

namespace mmprof::gen {

// FFmpeg's name of the codec ("h264", "vp9", "mpeg4") and the encoder settings in words.
const char* codec_name(VideoCodec codec);
const char* codec_description(VideoCodec codec);

// Encodes params.frames frames drawn by `render` as yuv420p `codec` at params.fps with a keyframe
// every params.keyframe_interval_s seconds exactly (scene-cut detection off), single-threaded so
// the bytes depend only on the inputs. Writes the whole MP4 (moov at the end) into `out`.
void encode_mp4(const VideoParams& params, VideoCodec codec,
                const std::function<void(int, const YuvView&)>& render, std::vector<uint8_t>& out);

}  // namespace mmprof::gen
