#pragma once
// One traced run: owns the trace arena (created before any loader worker is forked) and the GPU
// events handed over at the end, activates the recording points for its lifetime, and writes
// trace.json atomically (streamed into path.tmp, fsync, rename).
#include <filesystem>
#include <vector>

#include "gpu/gpu_event.hpp"
#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/summary_loading.hpp"
#include "trace/trace_arena.hpp"
#include "trace/trace_writer.hpp"

namespace mmprof::trace {

class TraceSession {
 public:
  // Regions: main, resource sampler, one per loader worker (at least one: with
  // loader.num_workers=0 the consumer thread fills batches as worker 0).
  explicit TraceSession(const Config& config);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  // Writes the trace of everything recorded so far. Call once every producer has stopped
  // (loaders destroyed, resource sampler stopped). Throws InputError naming the file.
  TraceCounts write(const std::filesystem::path& file, const Dataset& dataset) const;

  const TraceArena& arena() const noexcept { return arena_; }

 private:
  TraceArena arena_;
  std::vector<gpu::GpuEvent> gpu_events_;
  int64_t origin_ns_;
  int main_pid_, main_tid_;
};

// summary.json's `trace` block: what trace.json holds and what the cap dropped.
TraceFigures trace_summary(const TraceCounts& counts, const TraceArena& arena);

}  // namespace mmprof::trace
