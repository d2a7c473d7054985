// The NVML reader against a fake libnvidia-ml with fabricated values (support/fake_nvml.cpp),
// and its reasons when there is no usable library.
#include "gpu/nvml.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "mmprof/error.hpp"
#include "support/fake_nvml_values.hpp"

namespace mmprof::gpu {
namespace {

namespace fake = test::fake_nvml;

// Points MMPROF_NVML_LIB at `library` for one test.
class NvmlLibrary {
 public:
  explicit NvmlLibrary(const char* library) { setenv(kNvmlLibEnv, library, 1); }
  ~NvmlLibrary() { unsetenv(kNvmlLibEnv); }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
};

std::string unavailable_reason() {
  try {
    nvml_snapshot();
  } catch (const UnavailableError& e) {
    return e.what();
  }
  return "";
}

TEST(Nvml, ReadsEveryFigureFromTheLibrary) {
  const NvmlLibrary lib(MMPROF_TEST_FAKE_NVML);
  const NvmlSnapshot s = nvml_snapshot();
  EXPECT_EQ(s.library, MMPROF_TEST_FAKE_NVML);
  EXPECT_EQ(s.driver_version, fake::kDriver);
  EXPECT_EQ(s.nvml_version, fake::kNvmlVersion);
  ASSERT_EQ(s.gpus.size(), 1u);
  const NvmlGpu& g = s.gpus[0];
  EXPECT_EQ(g.name, fake::kName);
  EXPECT_EQ(g.memory_total_bytes, fake::kMemoryTotal);
  EXPECT_EQ(g.memory_used_bytes, fake::kMemoryUsed);
  EXPECT_EQ(g.sm_util_pct, fake::kSmUtil);
  EXPECT_EQ(g.memory_bw_util_pct, fake::kMemoryBwUtil);
  EXPECT_EQ(g.decoder_util_pct, fake::kDecoderUtil);
  EXPECT_EQ(g.jpeg_util_pct, fake::kJpegUtil);
  EXPECT_EQ(g.nvdec_engines, fake::kNvdecEngines);
  EXPECT_EQ(g.nvjpg_engines, fake::kNvjpgEngines);
  // The fake lists another process first: only this one's memory is ours.
  EXPECT_EQ(g.process_memory_bytes, fake::kProcessMemory);
  // As the inventory and a run's summary write it.
  const nlohmann::json j = to_json(g);
  EXPECT_EQ(j["process_memory_mib"], fake::kProcessMemory >> 20);
  EXPECT_EQ(j["memory_total_mib"], fake::kMemoryTotal >> 20);
  EXPECT_EQ(j["decoder_util_pct"], fake::kDecoderUtil);
  EXPECT_EQ(j["nvjpg_engines"], fake::kNvjpgEngines);
}

TEST(Nvml, NoLibrarySaysWhichFileWasTried) {
  const NvmlLibrary lib("/nonexistent/libnvidia-ml.so.1");
  const std::string why = unavailable_reason();
  EXPECT_EQ(why.rfind("NVML is unavailable: ", 0), 0u) << why;
  EXPECT_NE(why.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << why;
}

TEST(Nvml, ALibraryThatIsNotNvmlIsNamed) {
  const NvmlLibrary lib("libm.so.6");
  EXPECT_NE(unavailable_reason().find("libm.so.6 lacks a required NVML entry point"),
            std::string::npos)
      << unavailable_reason();
}

TEST(Nvml, TheDefaultCandidatesAreTheDriversLibrary) {
  EXPECT_EQ(nvml_candidates(nullptr).front(), "libnvidia-ml.so.1");
  EXPECT_EQ(nvml_candidates("/x/libnvidia-ml.so"), std::vector<std::string>{"/x/libnvidia-ml.so"});
}

}  // namespace
}  // namespace mmprof::gpu
