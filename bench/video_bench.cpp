// Video decode efficiency: how fast mmprof's VideoDecoder turns a dataset's clips into the frames a
// sample needs (video.frames uniformly spaced frames, scaled to video.size), counted in frames
// that came out of the decoder, so it compares with `ffmpeg -threads 1 -benchmark` decoding the
// same clips (bench/speed_bench.py runs both, interleaved; bench/README.md has the protocol).
// Usage: mmprof_video_bench DATASET [FRAMES] [SIZE] [REPS]
// Prints one JSON object per repetition: clips, frames decoded, wall and CPU seconds, frames per
// CPU second (the figure to set against ffmpeg's user+system time), clips/s.
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
    std::fprintf(stderr, "usage: %s DATASET [FRAMES] [SIZE] [REPS]\n", argv[0]);
    return 2;
  }
  const int frames = argc > 2 ? std::atoi(argv[2]) : 8;
  const int size = argc > 3 ? std::atoi(argv[3]) : 224;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  const Dataset ds = Dataset::open(argv[1], Layout::auto_detect).only(Modality::video);
  std::vector<std::vector<uint8_t>> clips;  // held in memory: the bench times decode, not reads
  for (const SampleEntry& entry : ds.samples())
    clips.push_back(read_media(ds, entry));

  VideoDecoder decoder(1);
  std::vector<uint8_t> out(static_cast<size_t>(frames) * size * size * 3);
  std::vector<double> times;
  Rng rng(0);
  for (int rep = 0; rep <= reps; ++rep) {  // repetition 0 is the warm-up, not printed
    int64_t decoded = 0;
    const int64_t t0 = monotonic_ns();
    const double cpu0 = cpu_seconds();
    for (const std::vector<uint8_t>& clip : clips) {
      const VideoInfo info = decoder.open(clip);
      sample_frame_times(info, frames, FrameSampling::uniform, rng, times);
      decoder.decode_frames(times, {0, 0, info.width, info.height}, size, size, out.data());
      decoded += decoder.stats().frames_decoded;
      decoder.close();
    }
    const double cpu = cpu_seconds() - cpu0;
    const double seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
    if (rep == 0) continue;
    std::printf(
        "{\"clips\": %zu, \"frames_decoded\": %lld, \"seconds\": %.6f, \"cpu_seconds\": %.6f, "
        "\"frames_per_cpu_s\": %.3f, \"clips_per_s\": %.3f}\n",
        clips.size(), static_cast<long long>(decoded), seconds, cpu,
        static_cast<double>(decoded) / cpu, static_cast<double>(clips.size()) / seconds);
  }
  return 0;
}
