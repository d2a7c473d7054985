// libmmprof_cupti_inject.so end to end without a GPU: a stand-in CUDA process loads it as the
// driver does, the fake libcupti supplies records, the library writes the events file at exit
// (the forked child writes none), and `mmprof inspect` reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpu/gpu_events_file.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;

std::string driver(const std::string& env) {
  return env + " " + test::shell_quote(MMPROF_TEST_INJECT_DRIVER) + " " +
         test::shell_quote(MMPROF_TEST_INJECT);
}

TEST(InjectTest, EventsAreWrittenAtExitAndInspectReadsThem) {
  test::TempDir dir;
  const auto r = test::run_command(
      driver("MMPROF_CUPTI_LIB=" + test::shell_quote(MMPROF_TEST_FAKE_CUPTI) +
             " MMPROF_GPU_EVENTS=" + test::shell_quote(dir.path() / "ev-%p.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mmprof-inject: 3 GPU events (2 dropped, 1 incomplete) -> "),
            std::string::npos)
      << r.output;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir.path()))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);  // the parent's; the forked child wrote nothing
  const gpu::GpuEventsFile f = gpu::read_gpu_events(files[0]);
  EXPECT_EQ(files[0].filename().string(), "ev-" + std::to_string(f.header.pid) + ".jsonl");
  EXPECT_EQ(f.header.clock_method, "timestamp_callback");
  EXPECT_EQ(f.header.dropped, 2u);
  EXPECT_EQ(f.header.incomplete, 1u);
  EXPECT_EQ(f.header.cupti_library, MMPROF_TEST_FAKE_CUPTI);
  ASSERT_EQ(f.events.size(), 3u);
  EXPECT_EQ(f.events[0].name, "kernel()");

  const auto inspect = test::run_mmprof("inspect " + test::shell_quote(files[0]));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("records lost           2 dropped, 1 incomplete"),
            std::string::npos)
      << inspect.output;
  EXPECT_NE(inspect.output.find("1 kernels, 1 memcpy, 1 memset"), std::string::npos);
  EXPECT_NE(inspect.output.find("1x  kernel()"), std::string::npos) << inspect.output;
}

TEST(InjectTest, UnavailableTracingLeavesTheProcessRunning) {
  test::TempDir dir;
  const auto events = dir.path() / "ev.jsonl";
  const auto r =
      test::run_command(driver("MMPROF_CUPTI_LIB=/nonexistent/libcupti.so.13 "
                               "MMPROF_GPU_EVENTS=" +
                               test::shell_quote(events)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mmprof-inject: GPU tracing unavailable: /nonexistent/libcupti.so.13 "
                          "not found (dlopen: "),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(events));
}

}  // namespace
}  // namespace mmprof
