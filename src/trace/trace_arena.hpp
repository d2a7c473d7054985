#pragma once
// The shared trace arena: one memfd mapping, created before any loader worker is forked, split
// into regions (main thread, resource sampler, one per loader worker). A producer claims a slot
// with one atomic increment of its region's count, fills it with plain stores and publishes it
// with a release store of its flag: no lock, no system call, so a worker can trace every sample.
// A region has one producer at a time; claiming by increment keeps it whole even when a
// replaced worker (a hung thread that was given up on) still writes into it. Forked workers
// inherit the mapping; threads share it. The main process reads every region after the
// producers have stopped.
//
// A global budget (max_events, one atomic counter shared by every region) bounds the trace;
// records past it are counted per region as dropped, never written.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "trace/trace_record.hpp"

namespace mmprof::trace {

class TraceArena {
 public:
  // `regions` producers; every region can hold the whole budget (the memfd is sparse: only
  // written pages take memory). Throws InputError when the mapping cannot be made.
  TraceArena(uint32_t regions, uint64_t max_events, uint32_t sample_every);
  ~TraceArena();
  TraceArena(const TraceArena&) = delete;
  TraceArena& operator=(const TraceArena&) = delete;

  // Appends to `region` (the caller is its only producer). Never blocks, never fails: a record
  // past the budget, or for a region that does not exist, is counted as dropped.
  void append(uint32_t region, const TraceRecord& record) noexcept;

  // Whether a batch's per-sample events are recorded (every sample_every-th batch).
  bool samples_traced(uint64_t batch_id) const noexcept { return batch_id % sample_every_ == 0; }
  // Loader generations: a new Loader bumps it before it forks; records carry the current one.
  void next_generation() noexcept;

  uint32_t regions() const noexcept { return regions_; }
  uint64_t max_events() const noexcept { return max_events_; }
  uint32_t sample_every() const noexcept { return sample_every_; }
  // The slots claimed so far in a region, in claim order; use only those whose `published` is
  // set (trace_writer does). Read them once the producers have stopped.
  std::span<const TraceRecord> records(uint32_t region) const noexcept;
  uint64_t dropped(uint32_t region) const noexcept;
  // Whether a slot holds a whole record (acquire: its bytes are visible).
  static bool published(const TraceRecord& slot) noexcept;
  uint64_t dropped_total() const noexcept;

 private:
  struct Header;
  struct RegionHeader;
  RegionHeader& region(uint32_t i) const noexcept;
  TraceRecord* slots(uint32_t i) const noexcept;

  uint32_t regions_;
  uint64_t max_events_;
  uint32_t sample_every_;
  size_t region_bytes_ = 0, bytes_ = 0;
  std::byte* base_ = nullptr;
};

}  // namespace mmprof::trace
