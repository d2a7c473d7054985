// A fake libcupti for tests of the live CUPTI path without a GPU (loaded through
// MMPROF_CUPTI_LIB, like the real one). It implements the functions mmprof resolves: enabling
// CONCURRENT_KERNEL stamps a start time; the next cuptiActivityFlushAll asks for one buffer, fills
// it with fixed records relative to that time and hands it back through the completion callback
// (later flushes have nothing); each completed buffer reports 2 dropped records.
//   FAKE_CUPTI_NO_TIMESTAMP_CALLBACK=1  refuse the timestamp callback (mmprof then calibrates
//                                       against cuptiGetTimestamp, here CLOCK_MONOTONIC + 1e12)
//   FAKE_CUPTI_REFUSE_ENABLE=1          cuptiActivityEnable fails with
//   CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
// Records (t0 = the time at enable, on the clock in use): kernel "_Z6kernelv" [t0+1000, t0+5000),
// pinned 4096-byte H2D copy [t0+6000, t0+7000), memset [t0+8000, t0+8100), a kernel without an
// end (incomplete) and a runtime API record (ignored).
#include <cupti.h>

#include <cstdlib>
#include <ctime>

#include "gpu/cupti_records.hpp"

namespace {

CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;
CUpti_TimestampCallbackFunc g_timestamp = nullptr;
uint64_t g_t0 = 0;
bool g_pending = false;  // records made since enable, not yet handed back

constexpr uint64_t kFakeClockAhead = 1'000'000'000'000ull;

uint64_t monotonic() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t now() {
  return g_timestamp ? g_timestamp() : monotonic() + kFakeClockAhead;
}

bool env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v == '1';
}

void fill(uint8_t* buffer, size_t size, size_t* used) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = g_t0 + 1000;
  k.end = g_t0 + 5000;
  k.streamId = 7;
  k.correlationId = 1;
  k.name = "_Z6kernelv";
  mmprof::test::pack_cupti_record(buffer, size, used, k);
  CUpti_ActivityMemcpy6 c{};
  c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  c.bytes = 4096;
  c.start = g_t0 + 6000;
  c.end = g_t0 + 7000;
  c.correlationId = 2;
  mmprof::test::pack_cupti_record(buffer, size, used, c);
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = 64;
  m.start = g_t0 + 8000;
  m.end = g_t0 + 8100;
  mmprof::test::pack_cupti_record(buffer, size, used, m);
  CUpti_ActivityKernel10 cut = k;
  cut.end = 0;
  mmprof::test::pack_cupti_record(buffer, size, used, cut);
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.start = g_t0;
  api.end = g_t0 + 10;
  mmprof::test::pack_cupti_record(buffer, size, used, api);
}

}  // namespace

extern "C" {

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  g_request = request;
  g_complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  g_timestamp = env("FAKE_CUPTI_NO_TIMESTAMP_CALLBACK") ? nullptr : callback;
  if (!g_timestamp) return CUPTI_ERROR_NOT_SUPPORTED;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (env("FAKE_CUPTI_REFUSE_ENABLE")) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
    g_t0 = now();
    g_pending = true;
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind) {
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t) {
  if (!g_pending || !g_request || !g_complete) return CUPTI_SUCCESS;
  g_pending = false;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_request(&buffer, &size, &max_records);
  if (!buffer) return CUPTI_ERROR_OUT_OF_MEMORY;
  size_t used = 0;
  fill(buffer, size, &used);
  g_complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  return mmprof::test::next_cupti_record(buffer, valid, record) ? CUPTI_SUCCESS
                                                                : CUPTI_ERROR_MAX_LIMIT_REACHED;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 2;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = monotonic() + kFakeClockAhead;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
                                                        : "CUPTI_ERROR (fake)";
  return CUPTI_SUCCESS;
}

}  // extern "C"
