// The CUPTI record -> GpuEvent converter on fabricated activity buffers (cupti.h's own structs,
// packed as CUPTI packs them), walked both by the test walker and, where libcupti loads, by
// libcupti's own cuptiActivityGetNextRecord. No GPU.
#include <cupti.h>
#include <gtest/gtest.h>

#include <vector>

#include "gpu/cupti_activity.hpp"
#include "gpu/cupti_records.hpp"
#include "support/test_support.hpp"

namespace mmprof::gpu {
namespace {

constexpr int64_t kOffset = -1'000'000;  // CUPTI time is 1 ms ahead of CLOCK_MONOTONIC here

// A fabricated buffer, packed and walked by tests/gpu/cupti_records.hpp.
class Buffer {
 public:
  template <typename Record>
  void add(const Record& r) {
    ASSERT_TRUE(test::pack_cupti_record(bytes_.data(), bytes_.size(), &used_, r));
  }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return used_; }
  RecordWalker walker() const {
    return [](uint8_t* buffer, size_t valid, void** record) {
      return test::next_cupti_record(buffer, valid, reinterpret_cast<CUpti_Activity**>(record));
    };
  }

 private:
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(1 << 16);  // new[] aligns to 16; CUPTI needs 8
  size_t used_ = 0;
};

Buffer fabricated() {
  Buffer b;
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 5'000'000;
  k.end = 7'500'000;
  k.deviceId = 1;
  k.streamId = 13;
  k.correlationId = 42;
  k.name = "_Z4gemmIfEviPT_";
  b.add(k);
  CUpti_ActivityMemcpy6 h2d{};
  h2d.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  h2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  h2d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  h2d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h2d.bytes = 1 << 20;
  h2d.start = 4'000'000;
  h2d.end = 4'100'000;
  h2d.streamId = 14;
  h2d.correlationId = 41;
  b.add(h2d);
  CUpti_ActivityMemcpy6 d2h = h2d;
  d2h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  d2h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  d2h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  d2h.start = 8'000'000;
  d2h.end = 8'200'000;
  b.add(d2h);
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 4096;
  set.start = 3'000'000;
  set.end = 3'000'500;
  set.deviceId = 1;
  set.streamId = 13;
  b.add(set);
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = 7'000'000;
  sync.end = 7'600'000;
  sync.streamId = 13;
  sync.correlationId = 43;
  b.add(sync);
  CUpti_ActivityKernel10 cut = k;  // cut by a forced flush: no end yet
  cut.end = 0;
  cut.start = 9'000'000;
  b.add(cut);
  CUpti_ActivityAPI api{};  // a kind mmprof does not use
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.start = 1;
  api.end = 2;
  b.add(api);
  return b;
}

void expect_converted(const std::vector<GpuEvent>& events, const ConvertStats& stats) {
  EXPECT_EQ(stats.records, 7u);
  EXPECT_EQ(stats.converted, 5u);
  EXPECT_EQ(stats.incomplete, 1u);
  EXPECT_EQ(stats.ignored, 1u);
  ASSERT_EQ(events.size(), 5u);
  const GpuEvent& k = events[0];
  EXPECT_EQ(k.kind, GpuEventKind::kernel);
  EXPECT_EQ(k.start_ns, 4'000'000);
  EXPECT_EQ(k.end_ns, 6'500'000);
  EXPECT_EQ(k.device, 1u);
  EXPECT_EQ(k.stream, 13u);
  EXPECT_EQ(k.correlation, 42u);
  EXPECT_EQ(k.name, "void gemm<float>(int, float*)");
  const GpuEvent& h2d = events[1];
  EXPECT_EQ(h2d.kind, GpuEventKind::memcpy);
  EXPECT_EQ(h2d.copy, CopyKind::h2d);
  EXPECT_TRUE(h2d.pinned_host);
  EXPECT_EQ(h2d.bytes, 1u << 20);
  EXPECT_EQ(h2d.start_ns, 3'000'000);
  EXPECT_EQ(h2d.end_ns, 3'100'000);
  EXPECT_EQ(h2d.stream, 14u);
  EXPECT_EQ(h2d.name, "memcpy HtoD");
  const GpuEvent& d2h = events[2];
  EXPECT_EQ(d2h.copy, CopyKind::d2h);
  EXPECT_FALSE(d2h.pinned_host);
  EXPECT_EQ(d2h.name, "memcpy DtoH");
  const GpuEvent& set = events[3];
  EXPECT_EQ(set.kind, GpuEventKind::memset);
  EXPECT_EQ(set.bytes, 4096u);
  EXPECT_EQ(set.start_ns, 2'000'000);
  EXPECT_EQ(set.end_ns, 2'000'500);
  const GpuEvent& sync = events[4];
  EXPECT_EQ(sync.kind, GpuEventKind::synchronization);
  EXPECT_EQ(sync.name, "stream synchronize");
  EXPECT_EQ(sync.correlation, 43u);
  EXPECT_EQ(sync.start_ns, 6'000'000);
}

TEST(CuptiConvertTest, FabricatedBufferBecomesExactGpuEvents) {
  Buffer b = fabricated();
  std::vector<GpuEvent> events;
  ConvertStats stats;
  convert_buffer(b.data(), b.size(), b.walker(), {"calibrated_offset", kOffset, 0}, events, stats);
  expect_converted(events, stats);
}

TEST(CuptiConvertTest, LibcuptiWalksTheFabricatedBufferTheSameWay) {
  std::string reason;
  auto api = CuptiActivityApi::open(&reason);
  if (!api) MMPROF_SKIP_WITHOUT("cupti", "libcupti not loadable: " << reason);
  Buffer b = fabricated();
  std::vector<GpuEvent> events;
  ConvertStats stats;
  convert_buffer(b.data(), b.size(), api->record_walker(), {"calibrated_offset", kOffset, 0},
                 events, stats);
  expect_converted(events, stats);
}

TEST(CuptiConvertTest, EmptyBufferGivesNothing) {
  Buffer b;
  std::vector<GpuEvent> events;
  ConvertStats stats;
  convert_buffer(b.data(), 0, b.walker(), {"timestamp_callback", 0, 0}, events, stats);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(stats.records, 0u);
}

}  // namespace
}  // namespace mmprof::gpu
