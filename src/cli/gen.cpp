#include "cli/gen.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/common.hpp"
#include "cli/usage.hpp"
#include "mmprof/error.hpp"
#include "run/progress.hpp"

namespace mmprof::cli {

void setup_gen(CLI::App& app, GenCliOptions& o) {
  app.add_option("--out,-o", o.gen.out, "Dataset folder to create")->required();
  app.add_option("--seed", o.gen.seed, "Seed: the same seed gives the same dataset");
  app.add_option("--images", o.gen.images, "Number of images")->check(at_least(0));
  app.add_option("--videos", o.gen.videos, "Number of video clips")->check(at_least(0));
  app.add_option("--png-fraction", o.gen.png_fraction, "Fraction of images stored as PNG")
      ->check(between(0, 1));
  app.add_option("--video-min-s", o.gen.video_min_s, "Shortest clip in seconds");
  app.add_option("--video-max-s", o.gen.video_max_s, "Longest clip in seconds");
  app.add_option("--video-max-height", o.gen.video_max_height, "Tallest clip (360..1080)");
  app.add_option("--video-codec", o.video_codec, "Clips' codec: h264 | vp9 | mpeg4 (Part 2)")
      ->check(CLI::IsMember({"h264", "vp9", "mpeg4"}));
  app.add_option("--image-size", o.image_size,
                 "Every image WxH (default: long-tailed from 320x240 to 1920x1080)");
  app.add_option("--layout", o.layout, "files | tar | both")
      ->check(CLI::IsMember({"files", "tar", "both"}));
  app.add_option("--shard-mb", o.shard_mb, "Tar shard size in MB")->check(above(0));
  app.add_option("--threads", o.gen.threads, "Encoder threads (0 = all cores)");
  add_json_flag(app, o.json, "dataset.json");
  add_verbosity_flags(app, o.verbosity);
}

int run_gen_command(GenCliOptions o) {
  if (o.gen.video_min_s <= 0 || o.gen.video_max_s < o.gen.video_min_s) {
    throw UsageError("--video-min-s must be > 0 and no larger than --video-max-s");
  }
  if (!o.image_size.empty()) {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(o.image_size.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x') {
      throw UsageError("--image-size " + o.image_size + ": expected WxH, e.g. 640x480");
    }
    o.gen.image_min_w = o.gen.image_max_w = w;
    o.gen.image_min_h = o.gen.image_max_h = h;
  }
  o.gen.video_codec = o.video_codec == "vp9"     ? VideoCodec::vp9
                      : o.video_codec == "mpeg4" ? VideoCodec::mpeg4
                                                 : VideoCodec::h264;
  o.gen.write_files = o.layout != "tar";
  o.gen.write_shards = o.layout != "files";
  o.gen.shard_bytes = static_cast<uint64_t>(o.shard_mb * 1e6);
  ProgressLine progress(progress_style(o.verbosity, o.json));
  o.gen.progress = [&progress](int done, int total) {
    progress.update("generate", done, total, 0, "samples");
  };
  const auto summary = generate_dataset(o.gen);
  progress.finish();
  if (o.json) {
    print_json(summary);
  } else if (!o.verbosity.quiet) {
    std::printf("dataset: %s (%d samples; described in dataset.json)\n",
                std::filesystem::absolute(o.gen.out).c_str(), summary["samples"].get<int>());
  }
  return 0;
}

}  // namespace mmprof::cli
