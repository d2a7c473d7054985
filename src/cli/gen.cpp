#include "cli/gen.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/common.hpp"
#include "cli/usage.hpp"
#include "measure/progress.hpp"
#include "mmprof/error.hpp"
#include "util/files.hpp"

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
  app.add_flag("--force", o.force,
               "Replace an --out that holds a dataset mmprof generated (once the new is whole)");
  add_json_flag(app, o.json, "dataset.json");
  add_verbosity_flags(app, o.verbosity);
}

namespace {

// Whether `dir` holds a dataset `mmprof gen` wrote: its dataset.json with mmprof's schema.
bool holds_generated_dataset(const std::filesystem::path& dir) {
  std::ifstream in(dir / "dataset.json");
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  return !doc.is_discarded() && doc.is_object() &&
         doc.value("schema", "").rfind("mmprof.dataset/", 0) == 0;
}

// An --out that holds anything is someone's: a dataset mmprof generated is replaced with
// --force, anything else never (gen writes into an empty or new folder).
void check_out(const std::filesystem::path& out, bool force) {
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) return;
  if (!std::filesystem::is_directory(out, ec)) {
    throw UsageError(fmt::format("--out {} exists and is not a folder", out.string()));
  }
  if (std::filesystem::is_empty(out, ec)) return;
  if (!holds_generated_dataset(out)) {
    throw UsageError(fmt::format(
        "--out {} is not empty and holds no dataset of mmprof gen (dataset.json): choose a new "
        "or empty folder (--force replaces only a dataset mmprof generated)",
        out.string()));
  }
  if (!force) {
    throw UsageError(
        fmt::format("--out {} holds a dataset already; --force replaces it", out.string()));
  }
  // --force replaces what gen wrote, and nothing of anyone else's.
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name != "dataset.json" && name != "files" && name != "shards") {
      throw UsageError(fmt::format(
          "--out {} holds {}, which mmprof gen did not write: --force would delete it with the "
          "dataset; move it away first",
          out.string(), name));
    }
  }
}

}  // namespace

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
  ProgressLine progress(session::progress_style(o.verbosity, o.json));
  o.gen.progress = [&progress](int done, int total) {
    progress.update("generate", done, total, 0, "samples");
  };
  check_out(o.gen.out, o.force);
  // Written beside --out, then moved into place: a dataset it replaces goes once the new is whole.
  const std::filesystem::path out = o.gen.out;
  o.gen.out = fresh_partial_dir(out);
  const auto summary = generate_dataset(o.gen);
  replace_dir(o.gen.out, out);
  o.gen.out = out;
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
