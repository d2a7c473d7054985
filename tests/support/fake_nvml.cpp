// A fake libnvidia-ml for the NVML reader's tests (loaded through MMPROF_NVML_LIB): the entry
// points mmprof calls, answering with the fabricated values of fake_nvml_values.hpp, and this
// process listed as holding GPU memory. No driver or GPU is needed.
#include <unistd.h>

#include <cstring>

#include "support/fake_nvml_values.hpp"

namespace {
using namespace mmprof::test::fake_nvml;
int device_token = 0;  // the handle's address, never dereferenced by the caller

int copy(char* out, unsigned size, const char* text) {
  if (std::strlen(text) + 1 > size) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, text);
  return 0;
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) int nvmlInit_v2() {
  return 0;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int) {
  return "fake NVML error";
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* out, unsigned size) {
  return copy(out, size, kDriver);
}
__attribute__((visibility("default"))) int nvmlSystemGetNVMLVersion(char* out, unsigned size) {
  return copy(out, size, kNvmlVersion);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 1;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** d) {
  if (i != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *d = &device_token;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(void*, char* out, unsigned size) {
  return copy(out, size, kName);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void*, unsigned long long* m) {
  m[0] = kMemoryTotal;
  m[1] = kMemoryTotal - kMemoryUsed;
  m[2] = kMemoryUsed;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void*, unsigned* u) {
  u[0] = kSmUtil;
  u[1] = kMemoryBwUtil;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetDecoderUtilization(void*, unsigned* pct,
                                                                           unsigned* period) {
  *pct = kDecoderUtil;
  *period = 167000;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetJpgUtilization(void*, unsigned* pct,
                                                                       unsigned* period) {
  *pct = kJpegUtil;
  *period = 167000;
  return 0;
}
// nvmlGpuInstanceProfileInfo_t: ten unsigned ints, then memorySizeMB.
__attribute__((visibility("default"))) int nvmlDeviceGetGpuInstanceProfileInfo(void*,
                                                                               unsigned profile,
                                                                               unsigned* info) {
  if (profile != 4) return 2;
  std::memset(info, 0, 10 * sizeof(unsigned));
  info[6] = kNvdecEngines;  // decoderCount
  info[8] = kNvjpgEngines;  // jpegCount
  return 0;
}
// nvmlProcessInfo_t: pid, usedGpuMemory, gpuInstanceId, computeInstanceId (24 bytes).
struct ProcessInfo {
  unsigned pid;
  unsigned long long used;
  unsigned gi, ci;
};
__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(
    void*, unsigned* n, ProcessInfo* out) {
  if (*n < 2) return 7;
  out[0] = {1, 1ull << 30, 0, 0};
  out[1] = {static_cast<unsigned>(getpid()), kProcessMemory, 0, 0};
  *n = 2;
  return 0;
}
}
