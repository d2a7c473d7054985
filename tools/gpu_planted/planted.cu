// mmprof_gpu_planted: a CUDA program whose GPU schedule is known in advance, to check that
// mmprof measures GPU idle time correctly (scripts/check-planted.sh runs it under
// libmmprof_cupti_inject.so and compares with `mmprof inspect EVENTS --planted PLAN`).
//
// Schedule: a short warm-up kernel; one pinned and one pageable host-to-device copy; then
// --kernels launches of `planted_spin`, each spinning on the GPU's %globaltimer for --kernel-us,
// separated by host-side gaps of --gap-us during which the GPU has nothing to do. The host
// busy-waits the gaps on CLOCK_MONOTONIC (no sleep: wake-up jitter would blur the plan); even
// gaps are labelled "data_wait" (as if the consumer waited for a batch), odd ones not.
//
// stdout: the plan as one JSON object ("mmprof.gpu_plan/1"): the nominal schedule, the host's
// gap intervals (CLOCK_MONOTONIC ns) and each kernel's own start/end read from %globaltimer (the
// GPU's clock; only differences are meaningful). Errors: one sentence on stderr, exit 4 when no
// GPU is usable, 2 for a bad option, 1 for a failed CUDA call.
#include <cuda_runtime.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void spin(unsigned long long duration_ns, unsigned long long* times) {
  const unsigned long long start = globaltimer();
  unsigned long long now = start;
  while (now - start < duration_ns)
    now = globaltimer();
  if (times) {
    times[0] = start;
    times[1] = now;
  }
}

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "mmprof_gpu_planted: %s failed: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

struct Options {
  int kernels = 10;
  long long kernel_us = 5000, gap_us = 5000, copy_mb = 64;
};

long long positive(const char* name, const char* value) {
  char* end = nullptr;
  const long long v = value ? std::strtoll(value, &end, 10) : 0;
  if (!value || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "mmprof_gpu_planted: %s needs a positive integer, got '%s'\n", name,
                 value ? value : "");
    std::exit(2);
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--kernels") {
      o.kernels = static_cast<int>(positive("--kernels", v));
    } else if (a == "--kernel-us") {
      o.kernel_us = positive("--kernel-us", v);
    } else if (a == "--gap-us") {
      o.gap_us = positive("--gap-us", v);
    } else if (a == "--copy-mb") {
      o.copy_mb = positive("--copy-mb", v);
    } else {
      std::fprintf(stderr,
                   "mmprof_gpu_planted: unknown option '%s' (options: --kernels N --kernel-us US "
                   "--gap-us US --copy-mb MB)\n",
                   a.c_str());
      std::exit(2);
    }
    ++i;
  }
  return o;
}

struct Gap {
  long long start_ns, end_ns;
  bool data_wait;
};

void busy_wait(long long ns) {
  const long long start = monotonic_ns();
  while (monotonic_ns() - start < ns) {
  }
}

}  // namespace

// extern "C": CUPTI reports the plain names, which the checker looks for.
extern "C" __global__ void planted_spin(unsigned long long duration_ns, unsigned long long* times) {
  spin(duration_ns, times);
}
extern "C" __global__ void planted_warmup(unsigned long long duration_ns) {
  spin(duration_ns, nullptr);
}

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int devices = 0;
  if (cudaError_t s = cudaGetDeviceCount(&devices); s != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mmprof_gpu_planted: no usable CUDA device: %s\n",
                 s == cudaSuccess ? "none found" : cudaGetErrorString(s));
    return 4;
  }
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  const size_t n = static_cast<size_t>(o.kernels);
  unsigned long long* d_times = nullptr;
  check(cudaMalloc(&d_times, 2 * n * sizeof(unsigned long long)), "cudaMalloc(times)");
  planted_warmup<<<1, 1>>>(100000ULL);
  check(cudaGetLastError(), "launch planted_warmup");
  check(cudaDeviceSynchronize(), "warm-up");

  const size_t bytes = static_cast<size_t>(o.copy_mb) << 20;
  void* device = nullptr;
  void* pinned = nullptr;
  check(cudaMalloc(&device, bytes), "cudaMalloc(copy)");
  check(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  std::vector<unsigned char> pageable(bytes, 1);
  std::memset(pinned, 1, bytes);
  check(cudaMemcpy(device, pinned, bytes, cudaMemcpyHostToDevice), "pinned H2D copy");
  check(cudaMemcpy(device, pageable.data(), bytes, cudaMemcpyHostToDevice), "pageable H2D copy");
  check(cudaDeviceSynchronize(), "copies");

  std::vector<Gap> gaps;
  for (size_t i = 0; i < n; ++i) {
    planted_spin<<<1, 1>>>(static_cast<unsigned long long>(o.kernel_us) * 1000ULL, d_times + 2 * i);
    check(cudaGetLastError(), "launch planted_spin");
    check(cudaStreamSynchronize(nullptr), "planted_spin");
    if (i + 1 == n) break;
    const long long start = monotonic_ns();
    busy_wait(o.gap_us * 1000);
    gaps.push_back({start, monotonic_ns(), i % 2 == 0});
  }
  std::vector<unsigned long long> times(2 * n);
  check(cudaMemcpy(times.data(), d_times, times.size() * sizeof(times[0]), cudaMemcpyDeviceToHost),
        "times D2H copy");

  std::printf(
      "{\"schema\":\"mmprof.gpu_plan/1\",\"kernel_name\":\"planted_spin\",\"kernels\":%d,"
      "\"kernel_ns\":%lld,\"gap_ns\":%lld,\"copies\":[{\"pinned\":true,\"bytes\":%zu},"
      "{\"pinned\":false,\"bytes\":%zu}],\"host_gaps\":[",
      o.kernels, o.kernel_us * 1000, o.gap_us * 1000, bytes, bytes);
  for (size_t i = 0; i < gaps.size(); ++i) {
    std::printf("%s{\"start_ns\":%lld,\"end_ns\":%lld,\"data_wait\":%s}", i ? "," : "",
                gaps[i].start_ns, gaps[i].end_ns, gaps[i].data_wait ? "true" : "false");
  }
  std::printf("],\"gpu_kernels\":[");
  for (size_t i = 0; i < n; ++i) {
    std::printf("%s{\"start_ns\":%llu,\"end_ns\":%llu}", i ? "," : "", times[2 * i],
                times[2 * i + 1]);
  }
  std::printf("]}\n");
  check(cudaFreeHost(pinned), "cudaFreeHost");
  check(cudaFree(device), "cudaFree(copy)");
  check(cudaFree(d_times), "cudaFree(times)");
  return 0;
}
