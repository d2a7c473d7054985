#pragma once
// GPU activity tracing for the rest of mmprof: start, run CUDA work, stop and get GpuEvents on
// CLOCK_MONOTONIC. Built on CuptiActivityApi; without CUPTI (or a GPU) start() returns null and
// says why, so callers report "unavailable: <reason>".
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cupti_activity.hpp"
#include "gpu/gpu_event.hpp"

namespace mmprof::gpu {

class GpuTracer {
 public:
  // Null (and *unavailable_reason set) when libcupti cannot be loaded or refuses to trace, or
  // when another tracer is active in this process.
  static std::unique_ptr<GpuTracer> start(std::string* unavailable_reason);
  ~GpuTracer();  // stops if stop() was not called, discarding the events
  GpuTracer(const GpuTracer&) = delete;
  GpuTracer& operator=(const GpuTracer&) = delete;

  // Flushes CUPTI, disables tracing and returns every event recorded since start(), sorted by
  // start time. Call once; later calls return nothing new.
  std::vector<GpuEvent> stop();

  // Records CUPTI reported as dropped (no buffer space), and records left out for invalid
  // timestamps; both belong in any report of the events.
  uint64_t dropped() const noexcept;
  uint64_t incomplete() const noexcept { return stats_.incomplete; }
  const ClockConversion& clock() const noexcept { return api_->clock(); }
  const std::string& library() const noexcept { return api_->library(); }

 private:
  explicit GpuTracer(std::unique_ptr<CuptiActivityApi> api) : api_(std::move(api)) {}
  std::unique_ptr<CuptiActivityApi> api_;
  ConvertStats stats_;
  bool stopped_ = false;
};

}  // namespace mmprof::gpu
