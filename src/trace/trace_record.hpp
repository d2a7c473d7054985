#pragma once
// One recorded trace event: plain data at a fixed size, written by one producer into its region
// of the shared trace arena (trace_arena.hpp) and turned into Chrome Trace Event JSON by the
// writer (trace_writer.hpp). Which argument means what depends on the event's name (below).
#include <cstdint>

namespace mmprof::trace {

enum class EventName : uint16_t {
  // Worker regions (one per loader worker).
  worker_start,  // instant; a = pid, b = tid
  worker_stop,   // instant; a = pid, b = tid
  read,          // span; a = batch id, b = sample index, c = failed stage + 1 (0: ok)
  decode,        // span; as read
  augment,       // span; as read
  collate,       // span, the sample's share of collation; a = batch id, b = sample index
  batch,         // span, a worker's whole batch; a = batch id, b = epoch, c = ok, d = failed
  // The main region (the consumer thread).
  loader_start,  // instant; a = workers
  wait,          // span, the consumer blocked in Loader::next(); a = batch id
  pin,           // span, copy into page-locked memory; a = batch id
  consumed,      // instant, a batch handed to the step; a = batch id, b = epoch
  queue,         // counter; a = batches completed and not yet delivered, b = batches in flight
  compute,       // span, the step's run on one batch; a = phase
  sync,          // span, a rank's dist.sync after a step (barrier or allreduce); a = phase
  step,          // span; a = phase, b = step index, c = 1 in warm-up, d = samples
  phase,         // instant, a phase starts; a = phase
  window_begin,  // instant, a phase's measured window opens (warm-up ends); a = phase
  window_end,    // instant; a = phase
  // The resource sampler's region.
  memory,  // counter of one process; a = pid, b = rss_kb, c = pss_kb (-1: not read), d = worker
};

// The phases of a run (experiment/baseline), as stored in records.
enum class Phase : int64_t { compute = 0, pipeline = 1, end_to_end = 2, other = 3 };
Phase phase_code(const char* name) noexcept;
const char* phase_name(int64_t code) noexcept;

// 64 bytes: one cache line, so producers on different cores never share a line they write.
struct alignas(64) TraceRecord {
  int64_t t_ns = 0;    // CLOCK_MONOTONIC (probe/clock.hpp): the start of a span, or the instant
  int64_t dur_ns = 0;  // spans only
  int64_t a = 0, b = 0, c = 0, d = 0;
  uint32_t generation = 0;  // which Loader of the run (batch ids restart with each Loader)
  EventName name = EventName::worker_start;
  // Set (release) by the arena once the record is whole; readers skip records without it (a
  // producer killed mid-append, a hung worker thread still writing).
  uint16_t published = 0;
};
static_assert(sizeof(TraceRecord) == 64);

const char* event_name(EventName name) noexcept;

}  // namespace mmprof::trace
