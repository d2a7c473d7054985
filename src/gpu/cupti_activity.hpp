#pragma once
// The CUPTI activity API behind a narrow interface (the pattern of kineto's CuptiActivityApi):
// cupti_activity.cpp is the only file that includes cupti.h or calls CUPTI. libcupti is loaded
// with dlopen into a function table, so mmprof starts where CUPTI is absent and says why.
//
// Flow: CUPTI asks for buffers (bufferRequested), fills them on its own thread and hands them
// back (bufferCompleted); completed buffers move, by ownership, into a queue; records become
// GpuEvents only at this boundary (convert_buffer), so the rest of mmprof never sees a CUPTI
// record. The converter is pure and takes the record walker as a parameter, so tests replay
// fabricated buffers through it without a GPU.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_event.hpp"

namespace mmprof::gpu {

// How CUPTI timestamps become CLOCK_MONOTONIC: monotonic = cupti + offset_ns.
//  "timestamp_callback": CUPTI itself reads CLOCK_MONOTONIC
//  (cuptiActivityRegisterTimestampCallback,
//                        CUPTI >= 12.x); the offset is 0.
//  "calibrated_offset":  CUPTI keeps its default clock (CLOCK_REALTIME on Linux); the offset is
//                        measured from (monotonic, cuptiGetTimestamp, monotonic) brackets.
struct ClockConversion {
  std::string method;
  int64_t offset_ns = 0;
  int64_t uncertainty_ns = 0;  // calibrated_offset: half the tightest bracket
  int64_t to_monotonic(uint64_t cupti_ns) const noexcept {
    return static_cast<int64_t>(cupti_ns) + offset_ns;
  }
};

// One calibration bracket: CLOCK_MONOTONIC read before and after one cuptiGetTimestamp.
struct ClockSample {
  int64_t monotonic_before_ns = 0;
  uint64_t cupti_ns = 0;
  int64_t monotonic_after_ns = 0;
};

// The offset from the tightest bracket (smallest after - before): its midpoint minus the CUPTI
// reading. Throws std::invalid_argument when there is no valid bracket.
ClockConversion calibrate_offset(const std::vector<ClockSample>& samples);

struct ConvertStats {
  uint64_t records = 0;     // records walked
  uint64_t converted = 0;   // became GpuEvents
  uint64_t ignored = 0;     // kinds mmprof does not use
  uint64_t incomplete = 0;  // zero or inverted timestamps (e.g. cut by a forced flush)
};

// Steps through the packed records of one buffer: `record` is null to start; returns false at
// the end. libcupti's cuptiActivityGetNextRecord in production (cupti_record_walker).
using RecordWalker = std::function<bool(uint8_t* buffer, size_t valid_size, void** record)>;

// The converter (defined only when built with the CUDA toolkit; `record` is a CUpti_Activity*).
// Kernels, memcpy, memset and synchronisation records become GpuEvents; other kinds are counted
// as ignored; records without valid timestamps as incomplete.
std::optional<GpuEvent> convert_record(const void* record, const ClockConversion& clock,
                                       ConvertStats& stats);
void convert_buffer(uint8_t* buffer, size_t valid_size, const RecordWalker& next,
                    const ClockConversion& clock, std::vector<GpuEvent>& out, ConvertStats& stats);

// One completed activity buffer and the bytes CUPTI filled.
struct ActivityBuffer {
  std::unique_ptr<uint8_t[]> data;
  size_t valid_size = 0;
};

// The live API. CUPTI's buffer callbacks carry no user pointer, so at most one instance is
// enabled per process at a time.
class CuptiActivityApi {
 public:
  // Loads libcupti: $MMPROF_CUPTI_LIB when set (only that), else libcupti.so.13, libcupti.so and
  // the build toolkit's copy. Returns null and sets *unavailable_reason when it cannot.
  static std::unique_ptr<CuptiActivityApi> open(std::string* unavailable_reason);
  ~CuptiActivityApi();
  CuptiActivityApi(const CuptiActivityApi&) = delete;
  CuptiActivityApi& operator=(const CuptiActivityApi&) = delete;

  // Registers the buffer callbacks, sets up the clock and enables CONCURRENT_KERNEL, MEMCPY,
  // MEMSET and SYNCHRONIZATION. False (and *reason) when CUPTI refuses; nothing stays enabled.
  bool enable(std::string* reason);
  // cuptiActivityFlushAll(FORCED) then disables the kinds; completed buffers stay queued.
  void flush_and_disable();
  // Moves the completed buffers out of the queue.
  std::vector<ActivityBuffer> take_completed();
  // Converts buffers with libcupti's own record walker.
  void convert(const std::vector<ActivityBuffer>& buffers, std::vector<GpuEvent>& out,
               ConvertStats& stats) const;
  // A walker over libcupti's cuptiActivityGetNextRecord (for tests that replay buffers through
  // the real library).
  RecordWalker record_walker() const;

  // Records dropped since enable().
  uint64_t dropped() const noexcept;
  const ClockConversion& clock() const noexcept { return clock_; }
  const std::string& library() const noexcept { return library_; }

  struct Functions;  // the dlsym'd function table (cupti_activity.cpp)

 private:
  CuptiActivityApi(const Functions* fns, std::string library);
  const Functions* fns_;            // process-lifetime table (libcupti is never unloaded)
  uint64_t dropped_at_enable_ = 0;  // CUPTI's dropped count is per process, not per session
  std::string library_;
  ClockConversion clock_;
  bool enabled_ = false;
};

}  // namespace mmprof::gpu
