#include "step/step.hpp"

#include <fmt/format.h>
#include <time.h>

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

}  // namespace

std::unique_ptr<Step> make_step(const Config& config) {
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

}  // namespace mmprof
