// `mmprof inspect FILE` on a fabricated GPU events file: the summary's figures, the planted check
// passing and failing with its exit code, and unrecognised or missing files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gpu/gpu_events_file.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

using gpu::GpuEvent;
using gpu::GpuEventKind;
using nlohmann::json;

constexpr int64_t kMs = 1'000'000;

GpuEvent kernel(int64_t start, int64_t end) {
  GpuEvent e;
  e.kind = GpuEventKind::kernel;
  e.start_ns = start;
  e.end_ns = end;
  e.name = "planted_spin";
  return e;
}

// A pinned 1 MB copy [0,1) ms, kernels [1,5) and [6,10) ms: window 10 ms, idle [5,6) = 10%.
gpu::GpuEventsFile events() {
  gpu::GpuEventsFile f;
  f.header = {77, "timestamp_callback", 0, 0, 0, "libcupti.so.13"};
  GpuEvent copy;
  copy.kind = GpuEventKind::memcpy;
  copy.copy = gpu::CopyKind::h2d;
  copy.pinned_host = true;
  copy.bytes = 1'000'000;
  copy.start_ns = 0;
  copy.end_ns = kMs;
  copy.name = "memcpy HtoD";
  f.events = {copy, kernel(kMs, 5 * kMs), kernel(6 * kMs, 10 * kMs)};
  return f;
}

json plan(int64_t gap_ns) {
  return {{"schema", "mmprof.gpu_plan/1"},
          {"kernel_name", "planted_spin"},
          {"kernels", 2},
          {"kernel_ns", 4 * kMs},
          {"gap_ns", gap_ns},
          {"copies", {{{"pinned", true}, {"bytes", 1'000'000}}}},
          {"host_gaps",
           {{{"start_ns", 5 * kMs + 1000}, {"end_ns", 6 * kMs - 1000}, {"data_wait", true}}}},
          {"gpu_kernels",
           {{{"start_ns", 0}, {"end_ns", 4 * kMs}}, {{"start_ns", 5 * kMs}, {"end_ns", 9 * kMs}}}}};
}

class InspectGpuTest : public ::testing::Test {
 protected:
  void SetUp() override { gpu::write_gpu_events(events_path(), events()); }
  std::filesystem::path events_path() const { return dir_.path() / "events.jsonl"; }
  std::string write_plan(int64_t gap_ns) {
    const auto p = dir_.path() / "plan.json";
    std::ofstream(p) << plan(gap_ns).dump();
    return test::shell_quote(p);
  }
  test::TempDir dir_;
};

TEST_F(InspectGpuTest, SummaryOverTheGpuActiveWindow) {
  const auto r = test::run_mmprof("inspect " + test::shell_quote(events_path()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("GPU events of process 77 (3 events)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("window                 10.000 ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("idle                   1.000 ms (10.00 %)"), std::string::npos);
  EXPECT_NE(r.output.find("kernel busy            80.00 %"), std::string::npos);
  EXPECT_NE(r.output.find("H2D pinned             1000.0 MB/s (1.0 MB)"), std::string::npos);
  EXPECT_NE(r.output.find("H2D pageable           n/a (no copy)"), std::string::npos);
  EXPECT_NE(r.output.find("8.000 ms  100.00 %       2x  planted_spin"), std::string::npos)
      << r.output;
}

TEST_F(InspectGpuTest, PlantedCheckPassesAndFailsWithItsExitCode) {
  auto r = test::run_mmprof("inspect " + test::shell_quote(events_path()) + " --planted " +
                            write_plan(kMs));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("result: PASS"), std::string::npos) << r.output;
  // Planted 0.9 ms, measured 1 ms: 11% off.
  r = test::run_mmprof("inspect " + test::shell_quote(events_path()) + " --planted " +
                       write_plan(9 * kMs / 10));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("mmprof: error: planted-schedule check failed: idle: measured 1.000 ms "
                          "vs planted 0.900 ms (11.11 % > 2.00 %)"),
            std::string::npos)
      << r.output;
}

TEST_F(InspectGpuTest, UnrecognisedAndMissingFilesExit3) {
  const auto other = dir_.path() / "other.txt";
  std::ofstream(other) << "hello\n";
  auto r = test::run_mmprof("inspect " + test::shell_quote(other));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("is not a file mmprof inspect recognizes"), std::string::npos);
  r = test::run_mmprof("inspect " + test::shell_quote(dir_.path() / "none.jsonl"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("none.jsonl: no such file"), std::string::npos) << r.output;
  r = test::run_mmprof("inspect --planted x.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace mmprof
