#include "integration/loader_fixture.hpp"

#include <cstdlib>
#include <fstream>
#include <memory>

#include "gen/generator.hpp"
#include "support/test_support.hpp"

namespace mmprof::test {
namespace fs = std::filesystem;

namespace {

void make_bad_copy(const fs::path& files, const fs::path& bad) {
  fs::create_directories(bad);
  fs::copy(files, bad, fs::copy_options::recursive);
  // A JPEG whose entropy-coded data is garbage after a valid header.
  auto jpeg = read_bytes(files / "000000.jpg");
  for (size_t i = jpeg.size() / 3; i < jpeg.size() - 2; ++i)
    jpeg[i] = static_cast<uint8_t>(i * 7);
  write_bytes(bad / "zz-corrupt.jpg", jpeg);
  // The first 40% of an MP4.
  for (const auto& e : fs::directory_iterator(files)) {
    if (e.path().extension() == ".mp4") {
      auto mp4 = read_bytes(e.path());
      mp4.resize(mp4.size() * 2 / 5);
      write_bytes(bad / "zz-truncated.mp4", mp4);
      // A whole clip under an image's extension.
      write_bytes(bad / "zz-wrong-ext.jpg", read_bytes(e.path()));
      break;
    }
  }
  write_bytes(bad / "zz-empty.png", {});
}

}  // namespace

const LoaderFixtureData& loader_fixture() {
  static std::unique_ptr<TempDir> dir;
  static LoaderFixtureData data;
  if (!dir) {
    dir = std::make_unique<TempDir>();
    GenOptions g;
    g.out = dir->path() / "ds";
    g.seed = 11;
    g.images = 22;
    g.videos = 3;
    g.png_fraction = 0.15;
    g.image_max_w = 800;
    g.image_max_h = 600;
    g.video_min_s = 1;
    g.video_max_s = 2;
    g.video_max_height = 360;
    g.write_files = true;
    g.write_shards = true;
    g.shard_bytes = 400'000;  // several shards
    generate_dataset(g);
    data.root = g.out;
    data.bad_root = dir->path() / "bad";
    make_bad_copy(g.out / "files", data.bad_root);
  }
  return data;
}

Dataset files_dataset() {
  return Dataset::open(loader_fixture().root / "files", Layout::files);
}

Config small_config() {
  Config c;
  c.loader.batch_size = 5;
  c.loader.num_workers = 2;
  c.loader.seed = 5;
  c.image.size = 32;
  c.image.dtype = ImageDType::uint8;
  c.video.frames = 4;
  c.video.size = 32;
  c.text.seq_len = 16;
  c.loader.pin_memory = PinMemory::off;
  return c;
}

Delivered drain(const Config& config, const Dataset& dataset, int epochs) {
  Loader loader(config, dataset);
  Delivered d;
  const size_t batches = loader.batches_per_epoch() * static_cast<size_t>(epochs);
  for (size_t b = 0; b < batches; ++b) {
    const Batch& batch = loader.next();
    for (const auto& s : batch.samples) {
      d.indices.push_back(s.index);
      d.minflt.push_back(s.minflt);
    }
    d.digests.push_back(batch.digest);
    d.epochs.push_back(batch.epoch);
  }
  return d;
}

}  // namespace mmprof::test
