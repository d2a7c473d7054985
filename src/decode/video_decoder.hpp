#pragma once
// Video decoding through libavformat/libavcodec from an in-memory file (a file read by the read
// stage, or a member of a tar shard). Frames are sampled at requested times with keyframe-aware
// seeking: a seek happens only when the keyframe the demuxer would land on for the target lies
// beyond the packets already decoded (so at least one packet is skipped); a target before the
// next keyframe is reached by decoding forward, and a clip never decodes the whole file.
//
// Non-reference skipping (issue 7): with `skip_nonref`, packets presented before the current target
// are sent with AVDISCARD_NONREF, so the decoder drops the frames no other frame predicts from
// (H.264's nal_ref_idc 0, about half of an x264 GOP) instead of decoding frames nobody asked for.
// The wanted frame and every reference are decoded as before, so pixels are the same (tested);
// a target past the last frame, which needs the last frame whatever its kind, is decoded again
// from its keyframe without skipping.
//
// Decoder context reuse (issue 7): with `reuse_decoder`, the codec context stays open across
// clips whose decoder setup (codec, tag, size, pixel format, profile, colour description, reorder
// delay, time base and extradata) is the same; the next clip only flushes it
// (avcodec_flush_buffers, as a seek does) instead of free + alloc + avcodec_open2. Decoded pixels
// are the same either way (tested). A context that saw an error is never reused. Limitation: a
// stream that replaces its extradata's parameter sets in band (H.264 SPS/PPS in the packets) would
// leave them in a reused context; MP4 'avc1' keeps them in the extradata, as every encoder we
// generate with does.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "decode/cuda_decode.hpp"
#include "decode/decode_budget.hpp"
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
  int64_t frames_decoded = 0;  // frames that came out of the decoder (including passed-over ones)
  int64_t seeks = 0;
  int64_t packets_read = 0;
  int64_t decoder_opens = 0;  // 1 when open() opened a codec context, 0 when it reused one
};

// Frame times for K frames: uniform = centres of K equal segments of the clip; random_window =
// K consecutive frames (stride 1) at a random start. Times are in seconds, ascending.
enum class FrameSampling { uniform, random_window };

// Fills `out` with k ascending frame times for the clip (rng used by random_window only).
void sample_frame_times(const VideoInfo& info, int k, FrameSampling mode, Rng& rng,
                        std::vector<double>& out);

// Work-saving switches that keep the decoded pixels (see the top of this file); each is an A/B
// lever of issue 7.
struct VideoDecodeLevers {
  bool reuse_decoder = false;  // keep the codec context across clips with the same decoder setup
  bool skip_nonref = true;     // do not decode non-reference frames presented before the target
};

class VideoDecoder {
 public:
  // Clips whose frames are larger than max_pixels are refused from the stream header; a clip's
  // decode (open to its last frame) past `budget` fails, checked at every packet.
  explicit VideoDecoder(int threads = 1, int64_t max_pixels = kDefaultMaxPixels,
                        VideoDecodeLevers levers = {}, DecodeBudget budget = {});
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

  // Decode on the GPU (decode.gpu_backend=nvdec): from the next open() on, the codec context
  // decodes through FFmpeg's CUDA hwaccel on `device` (which must outlive the decoder).
  void use_device(const CudaDevice* device);
  // The same frames as decode_frames, handed to `sink` as they are in device memory (frame i of
  // `times`), valid until the sink returns. Throws NotOnDevice when a frame came back on the host.
  using DeviceFrameSink = std::function<void(const DeviceFrame&, size_t)>;
  void decode_frames(std::span<const double> times, const DeviceFrameSink& sink);

  const VideoDecodeStats& stats() const noexcept;
  // Releases the clip; with reuse_decoder the codec context stays open for the next open().
  void close() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof
