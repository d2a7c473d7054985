#pragma once
// Video decoding through libavformat/libavcodec from an in-memory file (a file read by the read
// stage, or a member of a tar shard). Frames are sampled at requested times with keyframe-aware
// seeking: a seek happens only when the keyframe before the target lies beyond the current decode
// position, so a clip never decodes the whole file.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "decode/pixel_limit.hpp"
#include "transform/crop.hpp"
#include "util/rng.hpp"

namespace mmprof {

struct VideoInfo {
  int width = 0, height = 0;
  double duration_s = 0;  // from the container (stream duration, else format duration)
  double fps = 0;         // average frame rate
  int64_t frames = 0;     // nb_frames when the container says, else duration*fps rounded
  std::string codec;      // "h264", ...
  std::string pix_fmt;    // "yuv420p", ...
};

struct VideoDecodeStats {
  int64_t frames_decoded = 0;  // frames that came out of the decoder (including skipped ones)
  int64_t seeks = 0;
  int64_t packets_read = 0;
};

// Frame times for K frames: uniform = centres of K equal segments of the clip; random_window =
// K consecutive frames (stride 1) at a random start. Times are in seconds, ascending.
enum class FrameSampling { uniform, random_window };

// Fills `out` with k ascending frame times for the clip (rng used by random_window only).
void sample_frame_times(const VideoInfo& info, int k, FrameSampling mode, Rng& rng,
                        std::vector<double>& out);

class VideoDecoder {
 public:
  // Clips whose frames are larger than max_pixels are refused from the stream header.
  explicit VideoDecoder(int threads = 1, int64_t max_pixels = kDefaultMaxPixels);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Opens a clip held in memory (bytes must outlive the decode calls). Throws DecodeError.
  VideoInfo open(std::span<const uint8_t> bytes);

  // For each time (ascending, seconds from the stream start) decodes the first frame whose
  // timestamp is >= that time rounded to the stream's time base (the last frame when past the
  // end), converts `crop` of it (source pixels; the origin snapped down to the chroma grid, e.g.
  // even x and y for 4:2:0) to RGB24 at dst_w x dst_h and writes it to out + i*dst_w*dst_h*3.
  // Descending times work but cost a seek each. stats() counts since the last open().
  void decode_frames(std::span<const double> times, const CropRect& crop, int dst_w, int dst_h,
                     uint8_t* out);

  const VideoDecodeStats& stats() const noexcept;
  void close() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof
