// Decode placed on the device (decode.device, image/video.decode_device): the workers only read,
// the main process decodes into the rows they reserved. With the emulated backend (the host in
// the GPU's place) every batch must be the CPU placement's, tensor for tensor, bad samples
// included; the nvdec backend without a GPU must say why it cannot run.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "integration/loader_fixture.hpp"
#include "loader/batch_slot.hpp"
#include "mmprof/error.hpp"

namespace mmprof::test {
namespace {

// Everything a consumer sees of an epoch: per batch the failures, the samples with their rows
// and the process that decoded them, the digest, and the tensors' bytes.
struct Seen {
  std::map<std::string, std::string> failed;  // key -> stage
  std::vector<uint32_t> indices;
  std::vector<int32_t> rows;
  std::vector<uint64_t> digests;
  std::vector<std::vector<uint8_t>> tensors;  // tokens, images and videos of each batch
  int decoded_in_main[2] = {0, 0};            // images, videos
  std::string placement;
  double device_decode_ms = 0;
};

Seen see_epoch(const Config& c, const Dataset& ds) {
  Loader loader(c, ds);
  const BatchLayout layout = batch_layout(c);
  Seen seen;
  for (size_t b = 0; b < loader.batches_per_epoch(); ++b) {
    const Batch& batch = loader.next();
    for (const auto& f : batch.failures)
      seen.failed[f.key] = f.stage;
    for (const auto& s : batch.samples) {
      seen.indices.push_back(s.index);
      seen.rows.push_back(s.row);
      seen.decoded_in_main[s.modality == Modality::video ? 1 : 0] += s.decoded_in_main ? 1 : 0;
    }
    seen.digests.push_back(batch.digest);
    std::vector<uint8_t> bytes;
    const auto append = [&](const void* p, size_t n) {
      const auto* u = static_cast<const uint8_t*>(p);
      bytes.insert(bytes.end(), u, u + n);
    };
    append(batch.tokens, batch.size * layout.tokens_bytes);
    append(batch.images, batch.n_images * layout.image_bytes);
    append(batch.videos, batch.n_videos * layout.video_bytes);
    seen.tensors.push_back(std::move(bytes));
    seen.device_decode_ms += batch.device_decode_ms;
  }
  seen.placement = loader.stats().decode_placement;
  return seen;
}

Config emulated(Config c, DecodeDevice images, DecodeDevice videos) {
  c.decode.gpu_backend = GpuDecodeBackend::emulated;
  c.image.decode_device = images;
  c.video.decode_device = videos;
  return c;
}

void expect_same_batches(const Seen& placed, const Seen& cpu) {
  EXPECT_EQ(placed.failed, cpu.failed);
  EXPECT_EQ(placed.indices, cpu.indices);
  EXPECT_EQ(placed.rows, cpu.rows);
  EXPECT_EQ(placed.digests, cpu.digests);
  EXPECT_TRUE(placed.tensors == cpu.tensors) << "a batch's tokens or pixels differ";
}

TEST(DecodePlacement, EmulatedDeviceDecodeDeliversTheWorkersBatches) {
  const Dataset ds = files_dataset();
  const Config c = small_config();
  const Seen cpu = see_epoch(c, ds);
  EXPECT_EQ(cpu.placement, "cpu workers");
  EXPECT_EQ(cpu.decoded_in_main[0] + cpu.decoded_in_main[1], 0);
  const Seen gpu = see_epoch(emulated(c, DecodeDevice::gpu, DecodeDevice::gpu), ds);
  expect_same_batches(gpu, cpu);
  EXPECT_GT(gpu.decoded_in_main[0], 0);
  EXPECT_GT(gpu.decoded_in_main[1], 0);
  EXPECT_GT(gpu.device_decode_ms, 0);
  EXPECT_NE(gpu.placement.find("main process decodes images and video: emulated"),
            std::string::npos)
      << gpu.placement;
}

// The hybrid placement: clips in the main process, images in the workers.
TEST(DecodePlacement, HybridDecodesOnlyVideoInTheMainProcess) {
  const Dataset ds = files_dataset();
  const Config c = small_config();
  const Seen hybrid = see_epoch(emulated(c, DecodeDevice::cpu, DecodeDevice::gpu), ds);
  expect_same_batches(hybrid, see_epoch(c, ds));
  EXPECT_EQ(hybrid.decoded_in_main[0], 0);
  EXPECT_GT(hybrid.decoded_in_main[1], 0);
  EXPECT_NE(hybrid.placement.find("main process decodes video"), std::string::npos);
}

// A sample that fails in the main process gives its rows and its token row back: the batches
// (tensors included) are those of the workers, which drop bad samples as they go.
TEST(DecodePlacement, BadSamplesFailInTheMainProcessAsInTheWorkers) {
  const Dataset ds = Dataset::open(loader_fixture().bad_root, Layout::files);
  Config c = small_config();
  c.loader.shuffle = false;
  const Seen cpu = see_epoch(c, ds);
  ASSERT_EQ(cpu.failed.size(), 4u);
  for (const int workers : {0, 2}) {
    c.loader.num_workers = workers;
    expect_same_batches(see_epoch(emulated(c, DecodeDevice::gpu, DecodeDevice::gpu), ds), cpu);
  }
}

TEST(DecodePlacement, OnlyPlacedModalitiesReserveAStagingArea) {
  Config c = small_config();
  EXPECT_EQ(slot_geometry(c).staging_bytes, 0u);
  c.video.decode_device = DecodeDevice::gpu;
  c.decode.staging_mib = 3;
  EXPECT_EQ(slot_geometry(c).staging_bytes, 3u << 20);
  EXPECT_GE(slot_geometry(c).arena_bytes(), slot_geometry(c).staging_offset() + (3u << 20));
}

// Without a GPU (CI, this machine) the real backend is refused with its reason, exit 4.
TEST(DecodePlacement, NvdecWithoutAGpuSaysWhy) {
  Config c = small_config();
  c.decode.device = DecodeDevice::gpu;
  c.image.decode_device = c.video.decode_device = DecodeDevice::gpu;
  try {
    Loader loader(c, files_dataset());
    GTEST_SKIP() << "a GPU decode backend is available here: " << loader.stats().decode_placement;
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("decode.gpu_backend=nvdec"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mmprof::test
