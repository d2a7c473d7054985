#include "trace/tracer.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "gpu/gpu_event.hpp"
#include "probe/clock.hpp"
#include "probe/resource_usage.hpp"

namespace mmprof::trace {
namespace {

// Written by the main thread before workers start and after they stop; read everywhere.
std::atomic<TraceArena*> g_arena{nullptr};
std::vector<gpu::GpuEvent>* g_gpu_sink = nullptr;  // the main thread's only

TraceArena* arena() noexcept {
  return g_arena.load(std::memory_order_acquire);
}

void put(TraceArena& a, uint32_t region, EventName name, int64_t t0, int64_t t1, int64_t x = 0,
         int64_t y = 0, int64_t z = 0, int64_t w = 0) noexcept {
  TraceRecord r;
  r.name = name;
  r.t_ns = t0;
  r.dur_ns = t1 - t0;
  r.a = x;
  r.b = y;
  r.c = z;
  r.d = w;
  a.append(region, r);
}

void worker_instant(int worker, EventName name) noexcept {
  if (TraceArena* a = arena()) {
    const int64_t now = monotonic_ns();
    put(*a, worker_region(worker), name, now, now, getpid(), static_cast<int64_t>(gettid()));
  }
}

}  // namespace

TraceArena* active() noexcept {
  return arena();
}

void set_active(TraceArena* a, std::vector<gpu::GpuEvent>* gpu_sink) noexcept {
  g_gpu_sink = gpu_sink;
  g_arena.store(a, std::memory_order_release);
}

void worker_started(int worker) noexcept {
  worker_instant(worker, EventName::worker_start);
}

void worker_stopped(int worker) noexcept {
  worker_instant(worker, EventName::worker_stop);
}

void sample(int worker, uint64_t batch, uint32_t index, int64_t t_start, int64_t read_ns,
            int64_t decode_ns, int64_t augment_ns, int failed_stage) noexcept {
  TraceArena* a = arena();
  if (a == nullptr || !a->samples_traced(batch)) return;
  const uint32_t region = worker_region(worker);
  const auto id = static_cast<int64_t>(batch);
  const int64_t failed = failed_stage + 1;
  int64_t t = t_start;
  // A stage that did not run (a failure before it) has no time and gets no span.
  const std::pair<EventName, int64_t> stages[] = {
      {EventName::read, read_ns}, {EventName::decode, decode_ns}, {EventName::augment, augment_ns}};
  for (const auto& [name, ns] : stages) {
    if (ns <= 0) continue;
    put(*a, region, name, t, t + ns, id, index, failed);
    t += ns;
  }
}

void collate(int worker, uint64_t batch, uint32_t index, int64_t t0, int64_t t1) noexcept {
  TraceArena* a = arena();
  if (a == nullptr || !a->samples_traced(batch)) return;
  put(*a, worker_region(worker), EventName::collate, t0, t1, static_cast<int64_t>(batch), index);
}

void batch(int worker, uint64_t batch, int64_t epoch, int64_t t0, int64_t t1, uint32_t ok,
           uint32_t failed) noexcept {
  if (TraceArena* a = arena()) {
    put(*a, worker_region(worker), EventName::batch, t0, t1, static_cast<int64_t>(batch), epoch, ok,
        failed);
  }
}

void loader_started(int workers) noexcept {
  if (TraceArena* a = arena()) {
    a->next_generation();
    const int64_t now = monotonic_ns();
    put(*a, kMainRegion, EventName::loader_start, now, now, workers);
  }
}

void span(EventName name, int64_t t0, int64_t t1, int64_t x, int64_t y) noexcept {
  if (TraceArena* a = arena()) put(*a, kMainRegion, name, t0, t1, x, y);
}

void consumed(uint64_t batch, int64_t epoch) noexcept {
  if (TraceArena* a = arena()) {
    const int64_t now = monotonic_ns();
    put(*a, kMainRegion, EventName::consumed, now, now, static_cast<int64_t>(batch), epoch);
  }
}

void queue_depth(size_t completed, size_t in_flight) noexcept {
  if (TraceArena* a = arena()) {
    const int64_t now = monotonic_ns();
    put(*a, kMainRegion, EventName::queue, now, now, static_cast<int64_t>(completed),
        static_cast<int64_t>(in_flight));
  }
}

void compute(const std::string& phase, int64_t t0, int64_t t1) noexcept {
  if (TraceArena* a = arena()) {
    put(*a, kMainRegion, EventName::compute, t0, t1,
        static_cast<int64_t>(phase_code(phase.c_str())));
  }
}

void sync(const std::string& phase, int64_t t0, int64_t t1) noexcept {
  if (TraceArena* a = arena()) {
    put(*a, kMainRegion, EventName::sync, t0, t1, static_cast<int64_t>(phase_code(phase.c_str())));
  }
}

void step(const std::string& phase, int64_t index, bool warmup, int64_t t0, int64_t t1,
          int64_t samples) noexcept {
  if (TraceArena* a = arena()) {
    put(*a, kMainRegion, EventName::step, t0, t1, static_cast<int64_t>(phase_code(phase.c_str())),
        index, warmup ? 1 : 0, samples);
  }
}

void mark(EventName name, const std::string& phase) noexcept {
  if (TraceArena* a = arena()) {
    const int64_t now = monotonic_ns();
    put(*a, kMainRegion, name, now, now, static_cast<int64_t>(phase_code(phase.c_str())));
  }
}

void resources(const Snapshot& s) noexcept {
  TraceArena* a = arena();
  if (a == nullptr) return;
  for (const auto& p : s.processes) {
    if (!p.mem.rss_kb) continue;  // a zombie or an unreadable process: nothing to draw
    put(*a, kSamplerRegion, EventName::memory, s.t_ns, s.t_ns, p.pid, *p.mem.rss_kb,
        p.mem.pss_kb.value_or(-1), p.worker);
  }
}

void gpu_events(const std::vector<gpu::GpuEvent>& events) {
  if (g_gpu_sink != nullptr) g_gpu_sink->insert(g_gpu_sink->end(), events.begin(), events.end());
}

}  // namespace mmprof::trace
