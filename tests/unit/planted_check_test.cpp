// The planted-schedule check on fabricated plans and events (the real run is on a GPU machine).
#include "gpu/planted_check.hpp"

#include <gtest/gtest.h>

#include "mmprof/error.hpp"

namespace mmprof::gpu {
namespace {

using nlohmann::json;

constexpr int64_t kMs = 1'000'000;

// Three 5 ms kernels with 5 ms planted gaps; each real gap is 20 us longer (launch latency).
// The host gaps start 5 us after a kernel ends; the first is a data wait.
struct Fixture {
  json plan;
  std::vector<GpuEvent> events;
};

Fixture planted(int64_t host_shift_ns = 0) {
  Fixture f;
  json gaps = json::array(), kernels = json::array();
  int64_t t = 100 * kMs;
  for (int i = 0; i < 3; ++i) {
    GpuEvent k;
    k.kind = GpuEventKind::kernel;
    k.name = "planted_spin";
    k.start_ns = t;
    k.end_ns = t + 5 * kMs;
    f.events.push_back(k);
    kernels.push_back({{"start_ns", 7 + k.start_ns}, {"end_ns", 7 + k.end_ns}});
    if (i < 2) {
      const int64_t start = k.end_ns + 5000 + host_shift_ns;
      gaps.push_back({{"start_ns", start}, {"end_ns", start + 5 * kMs}, {"data_wait", i == 0}});
    }
    t = k.end_ns + 5 * kMs + 20'000;
  }
  for (const bool pinned : {true, false}) {
    GpuEvent c;
    c.kind = GpuEventKind::memcpy;
    c.copy = CopyKind::h2d;
    c.pinned_host = pinned;
    c.bytes = 64 << 20;
    c.start_ns = pinned ? 10 * kMs : 50 * kMs;
    c.end_ns = c.start_ns + 5 * kMs;
    f.events.push_back(c);
  }
  f.plan = {{"schema", "mmprof.gpu_plan/1"},
            {"kernel_name", "planted_spin"},
            {"kernels", 3},
            {"kernel_ns", 5 * kMs},
            {"gap_ns", 5 * kMs},
            {"copies",
             {{{"pinned", true}, {"bytes", 64 << 20}}, {{"pinned", false}, {"bytes", 64 << 20}}}},
            {"host_gaps", gaps},
            {"gpu_kernels", kernels}};
  return f;
}

PlantedCheck run(const Fixture& f) {
  return check_planted(parse_planted_plan(f.plan, "plan.json"), f.events, 0.02);
}

TEST(PlantedCheckTest, AFaithfulMeasurementPasses) {
  const PlantedCheck c = run(planted());
  EXPECT_TRUE(c.passed()) << (c.failures.empty() ? "" : c.failures.front());
  ASSERT_EQ(c.figures.size(), 4u);
  EXPECT_EQ(c.figures[0].name, "idle");
  EXPECT_DOUBLE_EQ(c.figures[0].planted_ms, 10.0);
  EXPECT_DOUBLE_EQ(c.figures[0].measured_ms, 10.04);
  EXPECT_NEAR(c.figures[0].relative_error, 0.004, 1e-12);
  EXPECT_EQ(c.figures[1].name, "data-wait idle");
  EXPECT_DOUBLE_EQ(c.figures[1].planted_ms, 5.0);
  EXPECT_DOUBLE_EQ(c.figures[1].measured_ms, 5.0);
  EXPECT_DOUBLE_EQ(c.figures[2].planted_ms, 10.04);  // %globaltimer gaps
  EXPECT_FALSE(c.figures[2].gated);
  EXPECT_EQ(c.window_summary.window_ns, 25 * kMs + 40'000);
  EXPECT_EQ(c.window_summary.kernels, 3u);
}

TEST(PlantedCheckTest, AClockOffsetShowsAsLostDataWaitIdle) {
  // Host gaps 1 ms later than the GPU idle they fall in: 1 ms of the 5 ms wait is lost.
  const PlantedCheck c = run(planted(kMs));
  EXPECT_FALSE(c.passed());
  EXPECT_NEAR(c.figures[1].measured_ms, 4.015, 1e-9);
  EXPECT_FALSE(c.figures[1].ok);
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_NE(c.failures[0].find("data-wait idle"), std::string::npos);
}

TEST(PlantedCheckTest, IdleBeyondToleranceFails) {
  Fixture f = planted();
  f.events[2].start_ns += kMs / 2;  // the last gap is 0.5 ms longer: 5.2% of 10 ms
  f.events[2].end_ns += kMs / 2;
  const PlantedCheck c = run(f);
  EXPECT_FALSE(c.passed());
  EXPECT_NE(c.failures[0].find("idle: measured 10.540 ms vs planted 10.000 ms (5.40 % > 2.00 %)"),
            std::string::npos)
      << c.failures[0];
}

TEST(PlantedCheckTest, MissingKernelsAndCopiesAreReported) {
  Fixture f = planted();
  f.events.erase(f.events.begin() + 1);
  EXPECT_EQ(run(f).failures.at(0),
            "found 2 'planted_spin' kernels in the events, the plan launched 3");
  f = planted();
  f.events.pop_back();  // the pageable copy
  const PlantedCheck c = run(f);
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_EQ(c.failures[0], "pageable H2D bytes before the schedule: 0 recorded, 67108864 planted");
}

TEST(PlantedCheckTest, BadPlansNameTheSourceAndTheKey) {
  Fixture f = planted();
  f.plan.erase("gap_ns");
  EXPECT_THROW(
      {
        try {
          parse_planted_plan(f.plan, "plan.json");
        } catch (const InputError& e) {
          EXPECT_STREQ(e.what(), "plan.json: planted plan lacks \"gap_ns\"");
          throw;
        }
      },
      InputError);
  f = planted();
  f.plan["gpu_kernels"].erase(0);
  EXPECT_THROW(parse_planted_plan(f.plan, "plan.json"), InputError);
  f = planted();
  f.plan["schema"] = "other/1";
  EXPECT_THROW(parse_planted_plan(f.plan, "plan.json"), InputError);
}

}  // namespace
}  // namespace mmprof::gpu
