#include "gpu/gpu_tracer.hpp"

#include <algorithm>

namespace mmprof::gpu {

std::unique_ptr<GpuTracer> GpuTracer::start(std::string* unavailable_reason) {
  auto api = CuptiActivityApi::open(unavailable_reason);
  if (!api || !api->enable(unavailable_reason)) return nullptr;
  return std::unique_ptr<GpuTracer>(new GpuTracer(std::move(api)));
}

GpuTracer::~GpuTracer() {
  if (stopped_) return;
  api_->flush_and_disable();
  api_->take_completed();  // discarded: nobody asked for these events
}

std::vector<GpuEvent> GpuTracer::stop() {
  std::vector<GpuEvent> events;
  if (stopped_) return events;
  stopped_ = true;
  api_->flush_and_disable();
  // Conversion happens here, on the caller's thread, with no lock held and no CUPTI callback
  // waiting on it: the buffers were moved out of the queue.
  api_->convert(api_->take_completed(), events, stats_);
  std::stable_sort(events.begin(), events.end(),
                   [](const GpuEvent& a, const GpuEvent& b) { return a.start_ns < b.start_ns; });
  return events;
}

uint64_t GpuTracer::dropped() const noexcept {
  return api_->dropped();
}

}  // namespace mmprof::gpu
