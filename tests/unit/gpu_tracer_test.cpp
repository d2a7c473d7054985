// GpuTracer without a GPU: the reasons it gives when CUPTI is missing or refuses, and (with the
// CUDA toolkit) the whole live path (callbacks, buffer ownership, flush, conversion, dropped
// count, both clock methods) against a fake libcupti (tests/gpu/fake_cupti.cpp).
#include "gpu/gpu_tracer.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "probe/clock.hpp"

namespace mmprof::gpu {
namespace {

#if defined(MMPROF_TEST_FAKE_CUPTI)
// Sets an environment variable for one scope and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(GpuTracerTest, AMissingLibraryIsNamedWithTheLoaderError) {
  ScopedEnv env("MMPROF_CUPTI_LIB", "/nonexistent/libcupti.so.13");
  std::string reason;
  EXPECT_EQ(GpuTracer::start(&reason), nullptr);
  EXPECT_EQ(reason.rfind("/nonexistent/libcupti.so.13 not found (dlopen: ", 0), 0u) << reason;
}

TEST(GpuTracerTest, ALibraryWithoutTheCuptiFunctionsIsRefused) {
  ScopedEnv env("MMPROF_CUPTI_LIB", "libm.so.6");
  std::string reason;
  EXPECT_EQ(GpuTracer::start(&reason), nullptr);
  EXPECT_EQ(
      reason.rfind("libm.so.6 is not a usable libcupti (missing cuptiActivityRegisterCallbacks", 0),
      0u)
      << reason;
}

TEST(GpuTracerTest, RefusedEnableSaysWhichKindAndWhy) {
  ScopedEnv lib("MMPROF_CUPTI_LIB", MMPROF_TEST_FAKE_CUPTI);
  ScopedEnv refuse("FAKE_CUPTI_REFUSE_ENABLE", "1");
  std::string reason;
  EXPECT_EQ(GpuTracer::start(&reason), nullptr);
  EXPECT_EQ(reason.rfind("cuptiActivityEnable(CONCURRENT_KERNEL): "
                         "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (",
                         0),
            0u)
      << reason;
}

TEST(GpuTracerTest, FakeCuptiRecordsArriveOnTheMonotonicClock) {
  ScopedEnv lib("MMPROF_CUPTI_LIB", MMPROF_TEST_FAKE_CUPTI);
  const int64_t before = monotonic_ns();
  std::string reason;
  auto tracer = GpuTracer::start(&reason);
  ASSERT_NE(tracer, nullptr) << reason;
  std::string second;
  EXPECT_EQ(GpuTracer::start(&second), nullptr);
  EXPECT_EQ(second, "another CUPTI activity session is active in this process");
  const std::vector<GpuEvent> events = tracer->stop();
  const int64_t after = monotonic_ns();
  EXPECT_EQ(tracer->clock().method, "timestamp_callback");
  EXPECT_EQ(tracer->library(), MMPROF_TEST_FAKE_CUPTI);
  EXPECT_EQ(tracer->dropped(), 2u);
  EXPECT_EQ(tracer->incomplete(), 1u);
  ASSERT_EQ(events.size(), 3u);
  const GpuEvent& k = events[0];
  EXPECT_EQ(k.kind, GpuEventKind::kernel);
  EXPECT_EQ(k.name, "kernel()");
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.duration_ns(), 4000);
  // The fake stamps t0 with the registered callback between before and after.
  EXPECT_GE(k.start_ns, before + 1000);
  EXPECT_LE(k.start_ns, after + 1000);
  EXPECT_EQ(events[1].kind, GpuEventKind::memcpy);
  EXPECT_EQ(events[1].copy, CopyKind::h2d);
  EXPECT_TRUE(events[1].pinned_host);
  EXPECT_EQ(events[1].bytes, 4096u);
  EXPECT_EQ(events[1].start_ns - k.start_ns, 5000);
  EXPECT_EQ(events[2].kind, GpuEventKind::memset);
  EXPECT_EQ(events[2].duration_ns(), 100);
  EXPECT_TRUE(tracer->stop().empty());  // a second stop has nothing new
}

TEST(GpuTracerTest, WithoutTheTimestampCallbackTheOffsetIsCalibrated) {
  ScopedEnv lib("MMPROF_CUPTI_LIB", MMPROF_TEST_FAKE_CUPTI);
  ScopedEnv no_callback("FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1");
  const int64_t before = monotonic_ns();
  std::string reason;
  auto tracer = GpuTracer::start(&reason);
  ASSERT_NE(tracer, nullptr) << reason;
  const std::vector<GpuEvent> events = tracer->stop();
  const int64_t after = monotonic_ns();
  const ClockConversion& c = tracer->clock();
  EXPECT_EQ(c.method, "calibrated_offset");
  // The fake's clock is CLOCK_MONOTONIC + 1e12 ns, read inside the bracket.
  EXPECT_LE(std::llabs(c.offset_ns + 1'000'000'000'000LL), c.uncertainty_ns);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_GE(events[0].start_ns, before + 1000 - c.uncertainty_ns);
  EXPECT_LE(events[0].start_ns, after + 1000 + c.uncertainty_ns);
  EXPECT_EQ(events[0].duration_ns(), 4000);
}

TEST(GpuTracerTest, ATracerDroppedWithoutStopLeavesNothingForTheNext) {
  ScopedEnv lib("MMPROF_CUPTI_LIB", MMPROF_TEST_FAKE_CUPTI);
  std::string reason;
  GpuTracer::start(&reason).reset();
  auto tracer = GpuTracer::start(&reason);
  ASSERT_NE(tracer, nullptr) << reason;
  EXPECT_EQ(tracer->stop().size(), 3u);  // its own flush only, not the discarded one's
  EXPECT_EQ(tracer->dropped(), 2u);
}
#else
TEST(GpuTracerTest, WithoutTheToolkitTracingIsUnavailable) {
  std::string reason;
  EXPECT_EQ(GpuTracer::start(&reason), nullptr);
  EXPECT_EQ(reason, "mmprof was built without the CUDA toolkit (no cupti.h)");
}
#endif

}  // namespace
}  // namespace mmprof::gpu
