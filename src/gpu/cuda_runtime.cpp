#include "gpu/cuda_runtime.hpp"

#include <fmt/format.h>

#include "loader/pinned_memory.hpp"
#include "mmprof/error.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mmprof::gpu {

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

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  require_gpu("device memory");
  const cudaError_t rc = cudaMalloc(&data_, bytes);
  if (rc != cudaSuccess) {
    data_ = nullptr;
    throw RunError(fmt::format("cudaMalloc of {:.1f} MB failed: {}",
                               static_cast<double>(bytes) / 1e6, cudaGetErrorString(rc)));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

void DeviceBuffer::fill_async(int value, const CudaStream& stream) {
  check(cudaMemsetAsync(data_, value, bytes_, as_stream(stream.native())), "cudaMemsetAsync");
}

void copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                          const CudaStream& stream) {
  check(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice,
                        as_stream(stream.native())),
        "cudaMemcpyAsync (host to device)");
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
DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  require_gpu("device memory");
}
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::fill_async(int, const CudaStream&) {}
void copy_to_device_async(void*, const void*, size_t, const CudaStream&) {}

#endif

}  // namespace mmprof::gpu
