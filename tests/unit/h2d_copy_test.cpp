// Host-to-device copies without a GPU: the bandwidth arithmetic, which bytes of a batch travel,
// and the unavailable path.
#include "gpu/h2d_copy.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gpu/cuda_runtime.hpp"
#include "mmprof/error.hpp"
#include "step/gemm_step.hpp"

namespace mmprof::gpu {
namespace {

TEST(H2DBandwidth, BytesOverMilliseconds) {
  EXPECT_DOUBLE_EQ(mb_per_s(2'000'000, 20), 100.0);  // 2 MB in 20 ms
  EXPECT_DOUBLE_EQ(mb_per_s(25'000'000'000, 1000), 25'000.0);
  EXPECT_TRUE(std::isnan(mb_per_s(1000, 0)));
  EXPECT_TRUE(std::isnan(mb_per_s(1000, -1)));
  EXPECT_TRUE(std::isnan(mb_per_s(1000, std::nan(""))));
}

TEST(H2DSpans, TokensImagesAndVideosWithTheirSizes) {
  std::vector<std::byte> arena(1000);
  Batch b;
  b.size = 3;
  b.n_images = 2;
  b.n_videos = 1;
  b.tokens = reinterpret_cast<const int32_t*>(arena.data());
  b.images = arena.data() + 100;
  b.videos = arena.data() + 400;
  const auto spans = mmprof::batch_spans(
      b,
      {.capacity = 4, .tokens_bytes = 5 * sizeof(int32_t), .image_bytes = 120, .video_bytes = 300});
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].data, arena.data());
  EXPECT_EQ(spans[0].bytes, 3u * 5 * 4);
  EXPECT_EQ(spans[1].data, arena.data() + 100);
  EXPECT_EQ(spans[1].bytes, 240u);
  EXPECT_EQ(spans[2].data, arena.data() + 400);
  EXPECT_EQ(spans[2].bytes, 300u);
}

TEST(H2DSpans, EmptyOrAbsentPartsAreSkipped) {
  std::vector<std::byte> arena(100);
  Batch b;
  b.size = 2;
  b.n_images = 2;  // the compute phase's synthetic batch: counts but no host data
  EXPECT_TRUE(mmprof::batch_spans(
                  b, {.capacity = 4, .tokens_bytes = 16, .image_bytes = 10, .video_bytes = 10})
                  .empty());
  b.images = arena.data();
  b.n_images = 0;
  b.videos = arena.data();
  EXPECT_TRUE(mmprof::batch_spans(
                  b, {.capacity = 4, .tokens_bytes = 16, .image_bytes = 10, .video_bytes = 10})
                  .empty());
}

TEST(H2DCopier, WithoutAGpuIsUnavailable) {
  if (gpu::gpu_availability().available) GTEST_SKIP() << "this machine has a GPU";
  try {
    H2DCopier copier(1 << 20);
    FAIL() << "made a copier without a GPU";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("is unavailable: ") +
                                         gpu::gpu_availability().reason),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(is_page_locked(this));
}

}  // namespace
}  // namespace mmprof::gpu
