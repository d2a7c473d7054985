// step.kind=gemm without a GPU: the calibration arithmetic, the config keys and the unavailable
// path (a GPU machine runs the real thing in scripts/device-check.sh).
#include "step/gemm_step.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/cublas_api.hpp"
#include "gpu/cuda_runtime.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"

namespace mmprof {
namespace {

Config resolved(const std::vector<std::string>& overrides) {
  nlohmann::json tree = default_config_tree();
  for (const auto& o : overrides)
    apply_override(tree, o);
  return resolve_config(tree);
}

using test::message_of;

TEST(GemmPlan, PicksTheCountClosestToStepMs) {
  // 4096^3: 2 * 4096^3 = 137438953472 FLOP; in 0.2 ms that is 687.19476736 TFLOP/s.
  const GemmPlan p = plan_gemms(4096, 0.2, 20);
  EXPECT_EQ(p.gemms_per_step, 100);
  EXPECT_DOUBLE_EQ(p.tflop_per_s, 687.19476736);
  EXPECT_DOUBLE_EQ(p.planned_step_ms(), 20.0);
  EXPECT_EQ(p.size, 4096);
  // 20 / 0.3 = 66.7 rounds to 67 (20.1 ms), not down to 66 (19.8 ms).
  EXPECT_EQ(plan_gemms(4096, 0.3, 20).gemms_per_step, 67);
  EXPECT_EQ(plan_gemms(4096, 0.3, 19.7).gemms_per_step, 66);  // 65.7 rounds up too
}

TEST(GemmPlan, AtLeastOneGemmEvenWhenOneIsLongerThanTheStep) {
  EXPECT_EQ(plan_gemms(4096, 3.0, 1.0).gemms_per_step, 1);
}

TEST(GemmPlan, AZeroCalibrationIsARunError) {
  EXPECT_THROW(plan_gemms(4096, 0, 20), RunError);
  EXPECT_THROW(plan_gemms(4096, -1, 20), RunError);
}

TEST(GemmPlan, FlopCountsMultiplyAndAdd) {
  EXPECT_DOUBLE_EQ(gemm_flop(2, 3, 4), 48.0);
}

TEST(GemmConfig, KindGemmIsAKeyAndRunsOnCuda) {
  const Config c = resolved({"step.kind=gemm", "step.ms=20"});
  EXPECT_EQ(c.step.kind, StepKind::gemm);
  EXPECT_STREQ(to_string(c.step.kind), "gemm");
  EXPECT_EQ(c.step.device, "cuda");  // the default cpu means "wherever gemm runs": the GPU
  EXPECT_EQ(resolved({"step.kind=gemm", "step.ms=5", "step.device=cuda:0"}).step.device, "cuda:0");
}

TEST(GemmConfig, GpuIsAnAliasOfCuda) {
  EXPECT_EQ(resolved({"step.kind=torch", "step.device=gpu"}).step.device, "cuda");
  EXPECT_EQ(resolved({"step.kind=gemm", "step.ms=5", "step.device=gpu"}).step.device, "cuda");
}

TEST(GemmConfig, NeedsAPositiveStepMs) {
  const auto m = message_of<UsageError>([] { resolved({"step.kind=gemm"}); });
  EXPECT_NE(m.find("step.kind=gemm needs step.ms > 0"), std::string::npos) << m;
}

TEST(GemmConfig, OnlyDeviceZero) {
  const auto m = message_of<UsageError>([] {
    resolved({"step.kind=gemm", "step.ms=5", "step.device=cuda:1"});
  });
  EXPECT_NE(m.find("step.device must be cuda or cuda:0, got 'cuda:1'"), std::string::npos) << m;
}

TEST(GemmStep, WithoutAGpuIsUnavailableWithTheReason) {
  if (gpu::gpu_availability().available) GTEST_SKIP() << "this machine has a GPU";
  const Config c = resolved({"step.kind=gemm", "step.ms=20"});
  const auto m = message_of<UnavailableError>([&] { make_step(c); });
  EXPECT_EQ(m.rfind("step.kind=gemm is unavailable: ", 0), 0u) << m;
  EXPECT_NE(m.find(gpu::gpu_availability().reason), std::string::npos) << m;
}

TEST(CublasLibrary, AnExplicitPathIsTheOnlyCandidate) {
  EXPECT_EQ(gpu::cublas_candidates("/opt/x/libcublas.so.13"),
            std::vector<std::string>{"/opt/x/libcublas.so.13"});
  const std::vector<std::string> defaults{"libcublas.so.13", "libcublas.so"};
  EXPECT_EQ(gpu::cublas_candidates(nullptr), defaults);
  EXPECT_EQ(gpu::cublas_candidates(""), defaults);
}

}  // namespace
}  // namespace mmprof
