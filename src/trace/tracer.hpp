#pragma once
// The recording points the loader, the baseline runner and the resource sampler call. Each is a
// no-op (one pointer test) unless a trace session (trace_session.hpp) has activated an arena, so
// `mmprof baseline` pays nothing measurable for them.
//
// Regions: the consumer (main) thread, the resource sampler (whose sink runs under its lock, so
// one producer at a time) and one per loader worker, by worker id. A worker process inherits the
// arena from the fork; a worker thread shares it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_arena.hpp"

namespace mmprof {
struct Snapshot;
}
namespace mmprof::gpu {
struct GpuEvent;
}

namespace mmprof::trace {

constexpr uint32_t kMainRegion = 0;
constexpr uint32_t kSamplerRegion = 1;
constexpr uint32_t kFirstWorkerRegion = 2;
inline uint32_t worker_region(int worker) noexcept {
  return kFirstWorkerRegion + static_cast<uint32_t>(worker);
}

// The arena being recorded into, or nullptr. Set before any loader worker exists, cleared after
// every one has stopped (trace_session.cpp), together with where GPU events go.
TraceArena* active() noexcept;
void set_active(TraceArena* arena, std::vector<gpu::GpuEvent>* gpu_sink) noexcept;

// In a loader worker (process or thread), from its BatchFiller's life.
void worker_started(int worker) noexcept;
void worker_stopped(int worker) noexcept;
// One sample's read, decode and augment spans, from the timings the worker keeps anyway
// (SampleRecord): read starts at t_start; each stage follows the previous one. `failed_stage`
// is -1 for a good sample, else the loader's Stage value. Only for traced batches.
void sample(int worker, uint64_t batch, uint32_t index, int64_t t_start, int64_t read_ns,
            int64_t decode_ns, int64_t augment_ns, int failed_stage) noexcept;
void collate(int worker, uint64_t batch, uint32_t index, int64_t t0, int64_t t1) noexcept;
void batch(int worker, uint64_t batch, int64_t epoch, int64_t t0, int64_t t1, uint32_t ok,
           uint32_t failed) noexcept;

// In the consumer thread.
void loader_started(int workers) noexcept;  // before the loader forks: a new batch-id space
void span(EventName name, int64_t t0, int64_t t1, int64_t a = 0, int64_t b = 0) noexcept;
void consumed(uint64_t batch, int64_t epoch) noexcept;  // now: the batch goes to the step
void queue_depth(size_t completed, size_t in_flight) noexcept;
void compute(const std::string& phase, int64_t t0, int64_t t1) noexcept;
void sync(const std::string& phase, int64_t t0, int64_t t1) noexcept;  // a rank's dist.sync
void step(const std::string& phase, int64_t index, bool warmup, int64_t t0, int64_t t1,
          int64_t samples) noexcept;
void mark(EventName name, const std::string& phase) noexcept;  // phase, window_begin/end

// In the resource sampler's sink: one memory counter per process of the snapshot.
void resources(const Snapshot& snapshot) noexcept;

// In the consumer thread, once GPU tracing has stopped: the GPU's own timeline (CUPTI records
// already converted to GpuEvents on CLOCK_MONOTONIC) for the trace's GPU tracks.
void gpu_events(const std::vector<gpu::GpuEvent>& events);

}  // namespace mmprof::trace
