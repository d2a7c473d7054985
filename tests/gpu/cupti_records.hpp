#pragma once
// Fabricated CUPTI activity buffers for tests: records from cupti.h's own structs, packed back to
// back as CUPTI packs them (each struct is 8-byte aligned and padded), and a walker that steps
// through them by each kind's struct size, as cuptiActivityGetNextRecord does.
#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace mmprof::test {

// The struct size of each record kind these tests fabricate (0 for others).
inline size_t cupti_record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    default:
      return 0;
  }
}

// Appends one record to `buffer` at `*used`; false when it does not fit.
template <typename Record>
bool pack_cupti_record(uint8_t* buffer, size_t size, size_t* used, const Record& r) {
  if (*used + sizeof(Record) > size) return false;
  std::memcpy(buffer + *used, &r, sizeof(Record));
  *used += sizeof(Record);
  return true;
}

// cuptiActivityGetNextRecord's contract: *record null to start; false at the end.
inline bool next_cupti_record(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = buffer;
  if (*record) next = reinterpret_cast<uint8_t*>(*record) + cupti_record_size((*record)->kind);
  if (next >= buffer + valid) return false;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return true;
}

}  // namespace mmprof::test
