#include "gen/generator.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include "gen/captions.hpp"
#include "gen/dataset_summary.hpp"
#include "gen/image_encode.hpp"
#include "gen/ordered_runner.hpp"
#include "gen/output_files.hpp"
#include "gen/sample_plan.hpp"
#include "gen/tar_writer.hpp"
#include "gen/video_encode.hpp"
#include "mmprof/dataset_layout.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

using namespace gen;
namespace fs = std::filesystem;

struct EncodedSample {
  SampleRecord record;
  std::vector<uint8_t> media;
  std::string caption;
};

// Media buffers recycled between the writer and the workers: a 6 MB image buffer allocated fresh
// for every sample would page-fault ~1500 times each time.
class BufferPool {
 public:
  std::vector<uint8_t> take() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return {};
    auto b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void give(std::vector<uint8_t>&& b) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(b));
  }

 private:
  std::mutex mu_;
  std::vector<std::vector<uint8_t>> free_;
};

// Everything one worker thread reuses from sample to sample.
struct WorkerState {
  JpegEncoder jpeg;
  ImageSynthScratch synth;
  RgbImage rgb;
  VideoSynthScratch video;
};

CaptionSubject encode_media(const GenOptions& o, Rng& rng, WorkerState& w, EncodedSample& s) {
  SampleRecord& r = s.record;
  if (r.kind == SampleKind::mp4) {
    const VideoParams p = draw_video_params(o, rng);
    VideoScene scene(rng, p, w.video);
    encode_mp4(
        p, o.video_codec, [&](int i, const YuvView& v) { scene.render(i, v); }, s.media);
    r.width = p.width, r.height = p.height, r.fps = p.fps, r.frames = p.frames;
    r.keyframe_interval_s = p.keyframe_interval_s;
    const ImageLook& look = scene.look();
    return {true, look.main_color, look.accent_color, look.shapes, look.textured};
  }
  const ImageParams p = draw_image_params(o, rng);
  const ImageLook look = synthesize_image(rng, p.width, p.height, w.synth, w.rgb);
  if (r.kind == SampleKind::jpeg) {
    w.jpeg.encode(w.rgb, p.jpeg_quality, s.media);
    r.jpeg_quality = p.jpeg_quality;
  } else {
    encode_png(w.rgb, s.media);
  }
  r.width = p.width, r.height = p.height;
  return {false, look.main_color, look.accent_color, look.shapes, look.textured};
}

EncodedSample encode_sample(const GenOptions& o, int index, SampleKind kind, int total,
                            WorkerState& w, BufferPool& pool) {
  EncodedSample s;
  s.record.key = sample_key(index, total);
  s.record.kind = kind;
  s.media = pool.take();
  Rng rng = Rng::for_item(o.seed, kStreamGenerate, static_cast<uint64_t>(index));
  try {
    const int words = draw_caption_words(rng);
    const CaptionSubject subject = encode_media(o, rng, w, s);
    s.caption = make_caption(rng, subject, words) + "\n";
    s.record.caption_words = count_words(s.caption);
  } catch (const UnavailableError&) {
    throw;
  } catch (const std::exception& e) {
    throw RunError("gen: sample " + s.record.key + ": " + e.what());
  }
  s.record.media_bytes = s.media.size();
  s.record.caption_bytes = s.caption.size();
  return s;
}

// Writes finished samples, in key order, to the layouts asked for.
class LayoutWriter {
 public:
  explicit LayoutWriter(const GenOptions& o) : options_(o) {
    if (o.write_files) {
      make_writable_dir(files_dir());
      remove_stale(files_dir(), is_sample_file_name);
      layouts_.files = true;
    }
    if (o.write_shards) {
      const fs::path dir = o.out / dataset_layout(Layout::tar).gen_folder;
      make_writable_dir(dir);
      remove_stale(dir, is_shard_file_name);
      shards_.emplace(dir, o.shard_bytes);
      layouts_.shards = true;
    }
  }

  void write(const EncodedSample& s) {
    const std::string media_name = s.record.key + "." + extension(s.record.kind);
    const std::string text_name = s.record.key + ".txt";
    if (layouts_.files) {
      const fs::path dir = files_dir();
      write_file(dir / media_name, s.media.data(), s.media.size());
      write_file(dir / text_name, s.caption.data(), s.caption.size());
      layouts_.files_count += 2;
      layouts_.files_bytes += s.media.size() + s.caption.size();
    }
    if (shards_) {
      caption_bytes_.assign(s.caption.begin(), s.caption.end());
      shards_->add_sample(s.record.key, {{media_name, &s.media}, {text_name, &caption_bytes_}});
    }
  }

  LayoutsWritten finish() {
    if (shards_) layouts_.shard_list = shards_->finish();
    return layouts_;
  }

 private:
  fs::path files_dir() const { return options_.out / dataset_layout(Layout::files).gen_folder; }

  const GenOptions& options_;
  LayoutsWritten layouts_;
  std::optional<ShardWriter> shards_;
  std::vector<uint8_t> caption_bytes_;
};

// How far workers may run ahead of the writer. A long clip holds the writer back while the other
// workers keep encoding images; too small a window serialises on every video.
constexpr int kReorderWindow = 32;

int worker_count(const GenOptions& o, int total) {
  int n = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(n, 1, std::max(1, total));
}

}  // namespace

nlohmann::json generate_dataset(const GenOptions& options) {
  validate(options);
  make_writable_dir(options.out);
  const std::vector<SampleKind> kinds = plan_kinds(options);
  const int total = static_cast<int>(kinds.size());
  const int threads = worker_count(options, total);
  LayoutWriter writer(options);
  BufferPool pool;
  std::vector<std::optional<WorkerState>> workers(static_cast<size_t>(threads));
  std::vector<SampleRecord> records;
  records.reserve(kinds.size());
  run_ordered<EncodedSample>(
      total, threads, kReorderWindow + 4 * threads,
      [&](int worker, int index) {
        auto& state = workers[static_cast<size_t>(worker)];
        if (!state) state.emplace();  // on the worker's own thread: its pages fault there
        return encode_sample(options, index, kinds[static_cast<size_t>(index)], total, *state,
                             pool);
      },
      [&](int index, EncodedSample&& s) {
        writer.write(s);
        records.push_back(s.record);
        pool.give(std::move(s.media));
        if (options.progress) options.progress(index + 1, total);
      });
  nlohmann::json doc = dataset_json(options, records, writer.finish());
  write_json_atomic(options.out / "dataset.json", doc);
  return doc;
}

}  // namespace mmprof
