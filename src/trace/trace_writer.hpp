#pragma once
// trace.json: the Chrome Trace Event Format in its JSON object form ({"traceEvents": [...],
// "displayTimeUnit", "otherData"}), which ui.perfetto.dev and chrome://tracing load. Streamed in
// chunks to a sink, never built as one document in memory.
//
// What becomes what (docs/trace.md):
//   records of the trace arena   -> "X" spans, "i" instants, "C" counters on the main thread,
//                                   the worker threads/processes and per-process counters
//   batch -> its samples,        -> flow arrows ("s"/"f") at the first nanosecond of both
//   batch -> the consumer's wait    spans, derived here, emitted only when both ends were
//                                   recorded, so every id pairs up (they bind in Perfetto and in
//                                   Chrome DevTools alike: trace_writer.cpp, arrow())
//   GpuEvents (CUPTI)            -> "X" spans on a "GPU d" process, one thread per stream
// Timestamps are microseconds since `origin_ns` (CLOCK_MONOTONIC), which otherData records, so
// ts * 1000 + origin_monotonic_ns is the nanosecond value steps.csv and stages.csv carry.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_event.hpp"
#include "trace/trace_record.hpp"

namespace mmprof::trace {

struct TraceSource {
  std::vector<std::span<const TraceRecord>> regions;  // by region number (tracer.hpp)
  uint64_t dropped = 0;                               // records refused by the budget
  uint64_t max_events = 0;
  uint32_t sample_every = 1;
  int64_t origin_ns = 0;
  int main_pid = 0, main_tid = 0;
  // The dataset key of a sample index, for the sample spans' args.
  std::function<std::string(uint32_t)> sample_key;
  std::span<const gpu::GpuEvent> gpu_events;
};

struct TraceCounts {
  uint64_t events = 0;    // every element of traceEvents, metadata and flows included
  uint64_t recorded = 0;  // records of the arena written
  uint64_t dropped = 0;
  uint64_t flows = 0;  // arrows (pairs of s and f)
  uint64_t gpu_events = 0;
};

using ChunkSink = std::function<void(std::string_view)>;

TraceCounts write_chrome_trace(const TraceSource& source, const ChunkSink& sink);

// Microseconds with three decimals (exact nanoseconds) of t_ns - origin_ns: "12.345".
std::string format_us(int64_t t_ns, int64_t origin_ns);

}  // namespace mmprof::trace
