#include "step/step.hpp"

#include <fmt/format.h>
#include <time.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "probe/clock.hpp"
#include "step/gemm_step.hpp"
#include "step/torch_plugin.hpp"
#include "util/error.hpp"

namespace mmprof {
namespace {

class SleepStep final : public Step {
 public:
  explicit SleepStep(double ms) : ns_(static_cast<int64_t>(ms * 1e6)) {}
  void run(const Batch&) override {
    // An absolute deadline, so EINTR and scheduler slop do not shorten the step.
    timespec deadline{};
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += ns_ / 1'000'000'000;
    deadline.tv_nsec += ns_ % 1'000'000'000;
    if (deadline.tv_nsec >= 1'000'000'000) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1'000'000'000;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) != 0) {
    }
  }
  std::string describe() const override {
    return fmt::format("sleep {} ms per micro-batch (emulated accelerator, frees the CPU)",
                       static_cast<double>(ns_) / 1e6);
  }

 private:
  int64_t ns_;
};

class SpinStep final : public Step {
 public:
  explicit SpinStep(double ms) : ns_(static_cast<int64_t>(ms * 1e6)) {}
  void run(const Batch&) override {
    const int64_t end = monotonic_ns() + ns_;
    while (monotonic_ns() < end) {
    }
  }
  std::string describe() const override {
    return fmt::format("spin {} ms per micro-batch (emulated host-bound step, holds one core)",
                       static_cast<double>(ns_) / 1e6);
  }

 private:
  int64_t ns_;
};

// Test-only faults of one rank, for the multi-rank tests (whose ranks must share one config):
// $MMPROF_TEST_SLOW_RANK=R:MS makes rank R's step MS ms slower per micro-batch (a planted
// straggler), $MMPROF_TEST_DIE_RANK=R:N kills rank R with SIGKILL at its Nth micro-batch.
struct PlantedFault {
  double delay_ms = 0;
  int64_t die_at = 0;  // 0: never
};

// "R:X" for this rank: X, else 0.
double planted_for(const char* name, int rank) {
  const char* v = std::getenv(name);
  int r = -1;
  double x = 0;
  return v != nullptr && std::sscanf(v, "%d:%lf", &r, &x) == 2 && r == rank && x > 0 ? x : 0;
}

class PlantedFaultStep final : public Step {
 public:
  PlantedFaultStep(std::unique_ptr<Step> inner, PlantedFault fault)
      : inner_(std::move(inner)), delay_(fault.delay_ms), die_at_(fault.die_at) {}
  void run(const Batch& batch) override {
    if (++runs_ == die_at_) raise(SIGKILL);
    inner_->run(batch);
    delay_.run(batch);
  }
  std::string describe() const override {
    return inner_->describe() + " + " + delay_.describe() + " planted by MMPROF_TEST_*_RANK";
  }
  bool includes_model_compute() const override { return inner_->includes_model_compute(); }
  std::optional<gpu::H2DCopy> last_h2d() const override { return inner_->last_h2d(); }
  void finish() override { inner_->finish(); }

 private:
  std::unique_ptr<Step> inner_;
  SleepStep delay_;
  int64_t die_at_;
  int64_t runs_ = 0;
};

std::unique_ptr<Step> step_of_kind(const Config& config) {
  switch (config.step.kind) {
    case StepKind::none:
      return nullptr;
    case StepKind::sleep:
      return std::make_unique<SleepStep>(config.step.ms);
    case StepKind::spin:
      return std::make_unique<SpinStep>(config.step.ms);
    case StepKind::torch:
      // Loaded here, and only here, so that nothing else in mmprof pays libtorch's start-up.
      return std::make_unique<TorchPluginStep>(config);
    case StepKind::gemm:
      return std::make_unique<GemmStep>(config);
  }
  throw UsageError(fmt::format("unknown step.kind {}", static_cast<int>(config.step.kind)));
}

}  // namespace

std::unique_ptr<Step> make_step(const Config& config) {
  std::unique_ptr<Step> step = step_of_kind(config);
  const PlantedFault fault{
      planted_for("MMPROF_TEST_SLOW_RANK", config.dist.rank),
      static_cast<int64_t>(planted_for("MMPROF_TEST_DIE_RANK", config.dist.rank))};
  if (step != nullptr && (fault.delay_ms > 0 || fault.die_at > 0))
    return std::make_unique<PlantedFaultStep>(std::move(step), fault);
  return step;
}

}  // namespace mmprof
