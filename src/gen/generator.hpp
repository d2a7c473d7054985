#pragma once
// `mmprof gen`: a deterministic synthetic multimodal dataset that looks like pretraining data to
// the decoders (photo-like JPEG/PNG images, MP4 clips with motion in H.264, VP9 or MPEG-4 Part 2,
// captions), written as a
// folder of files and/or WebDataset-style tar shards, plus dataset.json describing the mix.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof {

// The clips' codec: H.264 as most web video (the default), VP9 and MPEG-4 Part 2 (ASP, with
// B-frames, as DivX/Xvid archives) for decoders that other codecs load differently.
enum class VideoCodec : uint8_t { h264, vp9, mpeg4 };

struct GenOptions {
  std::filesystem::path out;
  uint64_t seed = 0;
  int images = 400;
  int videos = 40;
  double png_fraction = 0.08;  // of images; the rest are JPEG 4:2:0
  // Image sizes: long-tailed between these bounds (most near the small end, as web photos); equal
  // bounds give every image that size.
  int image_min_w = 320, image_min_h = 240, image_max_w = 1920, image_max_h = 1080;
  // Video: duration uniform in [min,max] seconds, heights from {360,480,720,1080} capped by max.
  double video_min_s = 1.0, video_max_s = 20.0;
  int video_max_height = 1080;
  VideoCodec video_codec = VideoCodec::h264;
  bool write_files = true;             // <out>/files/<key>.{jpg,png,mp4,txt}
  bool write_shards = false;           // <out>/shards/shard-NNNNNN.tar
  uint64_t shard_bytes = 64ull << 20;  // a new shard starts once this many bytes are written
  int threads = 0;                     // 0 = hardware concurrency
  std::function<void(int done, int total)> progress;  // optional, called from the caller's thread
};

// Generates the dataset and writes <out>/dataset.json (atomically, last: its presence means the
// dataset is complete); returns the dataset.json content. Output is identical for identical
// options whatever `threads` is (bit-for-bit for images and captions; videos also depend on the
// libx264 build). Sample files and shards left in <out>/files and <out>/shards by an earlier
// generation are removed first. Throws UsageError for impossible options, InputError naming the
// path when <out> cannot be written, RunError naming the sample key when an encoder fails, and
// UnavailableError when libavcodec lacks the clips' encoder or png. Lowers FFmpeg's process-wide
// log level from its default INFO to WARNING (libx264 is chatty at INFO).
nlohmann::json generate_dataset(const GenOptions& options);

// The embedded default: ~400 images and 40 short clips (1-4 s, up to 720p), both layouts,
// generated on first use into $XDG_CACHE_HOME/mmprof/default-v1 (or ~/.cache/mmprof/...) and
// reused afterwards (a folder with dataset.json is complete). Safe against concurrent first uses:
// each process generates into its own sibling temp folder and renames it into place; a loser of
// the race deletes its copy and uses the winner's. Takes ~15 s of wall time on 2 idle cores.
std::filesystem::path default_dataset_dir();
std::filesystem::path ensure_default_dataset();

}  // namespace mmprof
