#pragma once
// The GPU events file ("mmprof.gpu_events/1", JSON Lines) that the injection library writes for
// an external CUDA process and `mmprof inspect FILE` reads:
//   line 1   {"schema":"mmprof.gpu_events/1","pid":..,"clock":"CLOCK_MONOTONIC",
//             "clock_method":"timestamp_callback"|"calibrated_offset","clock_offset_ns":..,
//             "dropped":..,"incomplete":..,"events":N,"cupti_library":".."}
//   then N   {"kind":"kernel"|"memcpy"|"memset"|"synchronization","copy":"none"|"h2d"|"d2h"|
//             "d2d"|"other","pinned":bool,"start_ns":..,"end_ns":..,"device":..,"stream":..,
//             "correlation":..,"bytes":..,"name":".."}
// Times are CLOCK_MONOTONIC nanoseconds of the traced machine. "events" lets a reader tell a
// complete file from a truncated one.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu/gpu_event.hpp"

namespace mmprof::gpu {

inline constexpr char kGpuEventsSchema[] = "mmprof.gpu_events/1";

struct GpuEventsHeader {
  int64_t pid = 0;
  std::string clock_method;  // how CUPTI time became CLOCK_MONOTONIC (cupti_activity.hpp)
  int64_t clock_offset_ns = 0;
  uint64_t dropped = 0;     // records CUPTI reported as dropped (buffers full or refused)
  uint64_t incomplete = 0;  // records without valid timestamps, left out
  std::string cupti_library;
};

struct GpuEventsFile {
  GpuEventsHeader header;
  std::vector<GpuEvent> events;
};

// The file's text (header line + one line per event).
std::string format_gpu_events(const GpuEventsFile& file);
// Writes the text atomically (temp + rename); throws InputError naming the path.
void write_gpu_events(const std::filesystem::path& path, const GpuEventsFile& file);
// Whether the file's first line declares kGpuEventsSchema (false for unreadable files).
bool is_gpu_events_file(const std::filesystem::path& path);
// Parses the file; a bad line throws InputError("FILE:LINE: what is wrong").
GpuEventsFile read_gpu_events(const std::filesystem::path& path);

}  // namespace mmprof::gpu
