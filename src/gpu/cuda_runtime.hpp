#pragma once
// The CUDA runtime as mmprof's GPU steps use it: streams, events, device memory and asynchronous
// host-to-device copies. The only file besides loader/pinned_memory.cpp that calls cudart; it
// compiles without the toolkit, and then every constructor throws UnavailableError, so callers need
// no #ifdef. Handles are opaque (void*) so no CUDA header leaks into the rest of mmprof.
#include <cstddef>
#include <string>

namespace mmprof::gpu {

// Throws UnavailableError("<what> is unavailable: <reason>") unless a CUDA device is usable.
void require_gpu(const std::string& what);

// A non-blocking stream (it does not synchronise with the legacy default stream).
class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  void* native() const noexcept { return stream_; }  // a cudaStream_t
  void synchronize() const;

 private:
  void* stream_ = nullptr;
};

// An event with timing enabled.
class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void record(const CudaStream& stream);
  // Makes `stream` wait (on the device, the host does not block) for the last record().
  void make_wait(const CudaStream& stream) const;
  void synchronize() const;
  // Milliseconds between two completed events (cudaEventElapsedTime: ~0.5 us resolution).
  static double elapsed_ms(const CudaEvent& start, const CudaEvent& end);

 private:
  void* event_ = nullptr;
};

// Device memory (cudaMalloc), freed in the destructor.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const noexcept { return data_; }
  size_t size() const noexcept { return bytes_; }
  // Sets every byte to `value` on `stream` (cudaMemsetAsync).
  void fill_async(int value, const CudaStream& stream);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// cudaMemcpyAsync host -> device on `stream`. From pageable memory the runtime stages the copy
// through its own pinned buffer and the call returns only once the source may be reused; from
// page-locked memory it is truly asynchronous.
void copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                          const CudaStream& stream);

}  // namespace mmprof::gpu
