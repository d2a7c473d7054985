// Video decode efficiency: how fast mmprof's VideoDecoder turns a dataset's clips into the frames a
// sample needs (video.frames uniformly spaced frames, scaled to video.size), to compare with
// `ffmpeg -threads 1 -benchmark` decoding the same clips (bench/speed_bench.py runs both,
// interleaved; bench/README.md has the protocol). frames_decoded counts frames that came out of
// the decoder; with skip_nonref the non-reference frames before each target are not decoded at
// all, so the like-for-like figure is CPU seconds for the same clips (ffmpeg's / mmprof's).
// Usage: mmprof_video_bench DATASET [FRAMES] [SIZE] [REPS] [REUSE_DECODER] [SKIP_NONREF]
// (the last two 1|0, default 1: VideoDecodeLevers).
// Prints one JSON object per repetition: clips, frames decoded, seeks, codec contexts opened, wall
// and CPU seconds (to set against ffmpeg's user+system time), frames per CPU second, clips/s.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "decode/video_decoder.hpp"
#include "mmprof/dataset.hpp"
#include "probe/clock.hpp"
#include "util/rng.hpp"

namespace {

using namespace mmprof;

std::vector<uint8_t> read_media(const Dataset& ds, const SampleEntry& entry) {
  std::ifstream in(ds.root() / ds.files()[entry.media.file], std::ios::binary);
  in.seekg(static_cast<std::streamoff>(entry.media.offset));
  std::vector<uint8_t> bytes(entry.media.size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATASET [FRAMES] [SIZE] [REPS] [REUSE_DECODER] [SKIP_NONREF]\n",
                 argv[0]);
    return 2;
  }
  const int frames = argc > 2 ? std::atoi(argv[2]) : 8;
  const int size = argc > 3 ? std::atoi(argv[3]) : 224;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  VideoDecodeLevers levers;
  levers.reuse_decoder = argc > 5 && std::atoi(argv[5]) != 0;
  levers.skip_nonref = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  const Dataset ds = Dataset::open(argv[1], Layout::auto_detect).only(Modality::video);
  std::vector<std::vector<uint8_t>> clips;  // held in memory: the bench times decode, not reads
  for (const SampleEntry& entry : ds.samples())
    clips.push_back(read_media(ds, entry));

  VideoDecoder decoder(1, kDefaultMaxPixels, levers);
  std::vector<uint8_t> out(static_cast<size_t>(frames) * size * size * 3);
  std::vector<double> times;
  Rng rng(0);
  for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 is the warm-up, not printed
    VideoDecodeStats total;
    const int64_t t0 = monotonic_ns();
    const double cpu0 = cpu_seconds();
    for (const std::vector<uint8_t>& clip : clips) {
      const VideoInfo info = decoder.open(clip);
      sample_frame_times(info, frames, FrameSampling::uniform, rng, times);
      decoder.decode_frames(times, {0, 0, info.width, info.height}, size, size, out.data());
      total.frames_decoded += decoder.stats().frames_decoded;
      total.seeks += decoder.stats().seeks;
      total.decoder_opens += decoder.stats().decoder_opens;
      decoder.close();
    }
    const double cpu = cpu_seconds() - cpu0;
    const double seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
    if (rep == 0) continue;
    std::printf(
        "{\"clips\": %zu, \"reuse_decoder\": %s, \"skip_nonref\": %s, \"frames_decoded\": %lld, "
        "\"seeks\": %lld, \"decoder_opens\": %lld, \"seconds\": %.6f, \"cpu_seconds\": %.6f, "
        "\"frames_per_cpu_s\": %.3f, \"clips_per_s\": %.3f}\n",
        clips.size(), levers.reuse_decoder ? "true" : "false",
        levers.skip_nonref ? "true" : "false", static_cast<long long>(total.frames_decoded),
        static_cast<long long>(total.seeks), static_cast<long long>(total.decoder_opens), seconds,
        cpu, static_cast<double>(total.frames_decoded) / cpu,
        static_cast<double>(clips.size()) / seconds);
  }
  return 0;
}
