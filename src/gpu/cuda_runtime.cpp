#include "gpu/cuda_runtime.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "mmprof/error.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mmprof::gpu {

const GpuAvailability& gpu_availability() {
  static const GpuAvailability cached = [] {
    GpuAvailability g;
#ifdef MMPROF_HAVE_CUDA
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      g.reason = fmt::format("cudaGetDeviceCount failed: {} ({})", cudaGetErrorString(rc),
                             static_cast<int>(rc));
    } else if (count == 0) {
      g.reason = "no CUDA device is visible";
    } else {
      g.available = true;
      g.devices = count;
    }
#else
    g.reason = "mmprof was built without CUDA (MMPROF_WITH_CUDA=OFF or no toolkit found)";
#endif
    return g;
  }();
  return cached;
}

void require_gpu(const std::string& what) {
  const GpuAvailability& gpu = gpu_availability();
  if (!gpu.available) throw UnavailableError(what + " is unavailable: " + gpu.reason);
}

#ifdef MMPROF_HAVE_CUDA
namespace {

// Calls made after require_gpu() succeeded: a failure is a broken run, not a missing feature.
void check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) {
    throw RunError(
        fmt::format("{} failed: {} ({})", call, cudaGetErrorString(rc), static_cast<int>(rc)));
  }
}

cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}
cudaEvent_t as_event(void* e) {
  return static_cast<cudaEvent_t>(e);
}

}  // namespace

CudaStream::CudaStream() {
  require_gpu("a CUDA stream");
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = s;
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(as_stream(stream_));
}

void CudaStream::synchronize() const {
  check(cudaStreamSynchronize(as_stream(stream_)), "cudaStreamSynchronize");
}

CudaEvent::CudaEvent() {
  require_gpu("a CUDA event");
  cudaEvent_t e = nullptr;
  check(cudaEventCreate(&e), "cudaEventCreate");
  event_ = e;
}

CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(as_event(event_));
}

void CudaEvent::record(const CudaStream& stream) {
  check(cudaEventRecord(as_event(event_), as_stream(stream.native())), "cudaEventRecord");
}

void CudaEvent::make_wait(const CudaStream& stream) const {
  check(cudaStreamWaitEvent(as_stream(stream.native()), as_event(event_), 0),
        "cudaStreamWaitEvent");
}

void CudaEvent::synchronize() const {
  check(cudaEventSynchronize(as_event(event_)), "cudaEventSynchronize");
}

double CudaEvent::elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, as_event(start.event_), as_event(end.event_)),
        "cudaEventElapsedTime");
  return static_cast<double>(ms);
}

CudaBuffer::CudaBuffer(Memory memory, size_t bytes) : memory_(memory), bytes_(bytes) {
  const bool host = memory == Memory::pinned_host;
  require_gpu(host ? "pinned memory" : "device memory");
  const cudaError_t rc =
      host ? cudaHostAlloc(&data_, bytes, cudaHostAllocDefault) : cudaMalloc(&data_, bytes);
  if (rc == cudaSuccess) return;
  data_ = nullptr;
  // Without page-locked memory the loader falls back to pageable copies: a missing capability.
  // Device memory a step needs and cannot get breaks the run.
  const std::string message =
      fmt::format("{} of {:.1f} MB failed: {}", host ? "cudaHostAlloc" : "cudaMalloc",
                  static_cast<double>(bytes) / 1e6, cudaGetErrorString(rc));
  if (host) throw UnavailableError(message);
  throw RunError(message);
}

CudaBuffer::~CudaBuffer() {
  if (data_ == nullptr) return;
  if (memory_ == Memory::pinned_host) {
    cudaFreeHost(data_);
  } else {
    cudaFree(data_);
  }
}

void CudaBuffer::fill_async(int value, const CudaStream& stream) {
  check(cudaMemsetAsync(data_, value, bytes_, as_stream(stream.native())), "cudaMemsetAsync");
}

void copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                          const CudaStream& stream) {
  check(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice,
                        as_stream(stream.native())),
        "cudaMemcpyAsync (host to device)");
}

void* runtime_context() {
  require_gpu("the CUDA runtime's context");
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  check(cudaFree(nullptr), "cudaFree(0) (making the primary context current)");
  // The driver's entry point, from the libcuda the runtime has already loaded.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  using CtxGetCurrent = int (*)(void**);
  const auto get = libcuda != nullptr
                       ? reinterpret_cast<CtxGetCurrent>(dlsym(libcuda, "cuCtxGetCurrent"))
                       : nullptr;
  void* context = nullptr;
  if (get == nullptr || get(&context) != 0 || context == nullptr) {
    throw UnavailableError("the CUDA runtime's context is unavailable: cuCtxGetCurrent failed");
  }
  return context;
}

void copy(void* dst, const void* src, size_t bytes, Direction direction) {
  const bool to_device = direction == Direction::to_device;
  check(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
        to_device ? "cudaMemcpy (host to device)" : "cudaMemcpy (device to host)");
}

#else  // Built without CUDA: require_gpu() throws, so nothing below it is ever reached.

CudaStream::CudaStream() {
  require_gpu("a CUDA stream");
}
CudaStream::~CudaStream() = default;
void CudaStream::synchronize() const {}
CudaEvent::CudaEvent() {
  require_gpu("a CUDA event");
}
CudaEvent::~CudaEvent() = default;
void CudaEvent::record(const CudaStream&) {}
void CudaEvent::make_wait(const CudaStream&) const {}
void CudaEvent::synchronize() const {}
double CudaEvent::elapsed_ms(const CudaEvent&, const CudaEvent&) {
  return 0;
}
CudaBuffer::CudaBuffer(Memory memory, size_t bytes) : memory_(memory), bytes_(bytes) {
  require_gpu(memory == Memory::pinned_host ? "pinned memory" : "device memory");
}
CudaBuffer::~CudaBuffer() = default;
void CudaBuffer::fill_async(int, const CudaStream&) {}
void copy_to_device_async(void*, const void*, size_t, const CudaStream&) {}
void copy(void*, const void*, size_t, Direction) {}
void* runtime_context() {
  require_gpu("the CUDA runtime's context");
  return nullptr;
}

#endif

}  // namespace mmprof::gpu
