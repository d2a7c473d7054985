#pragma once
// The CUDA runtime as mmprof uses it: whether a device exists, streams, events, page-locked host
// and device memory, asynchronous host-to-device copies. The only file that calls cudart; it
// compiles without the toolkit, and then every constructor throws UnavailableError, so callers need
// no #ifdef. Handles are opaque (void*) so no CUDA header leaks into the rest of mmprof.
#include <cstddef>
#include <string>

namespace mmprof::gpu {

struct GpuAvailability {
  bool available = false;
  int devices = 0;
  // Why not, when unavailable ("built without CUDA", "cudaGetDeviceCount failed: ...").
  std::string reason;
};

// Asks the CUDA runtime whether a device exists (cached after the first call). Makes no context,
// so it is safe before the loader forks its workers.
const GpuAvailability& gpu_availability();

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

// Where a CudaBuffer lives: page-locked host memory (cudaHostAlloc: the loader's pin stage, so
// H2D copies run asynchronously at full bandwidth) or device memory (cudaMalloc).
enum class Memory { pinned_host, device };

// Memory from the CUDA runtime, freed in the destructor. Throws UnavailableError when no GPU is
// usable, RunError when the allocation fails.
class CudaBuffer {
 public:
  CudaBuffer(Memory memory, size_t bytes);
  ~CudaBuffer();
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  void* data() const noexcept { return data_; }
  size_t size() const noexcept { return bytes_; }
  Memory memory() const noexcept { return memory_; }
  // Sets every byte to `value` on `stream` (cudaMemsetAsync; device memory only).
  void fill_async(int value, const CudaStream& stream);

 private:
  Memory memory_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// cudaMemcpyAsync host -> device on `stream`. From pageable memory the runtime stages the copy
// through its own pinned buffer and the call returns only once the source may be reused; from
// page-locked memory it is truly asynchronous.
void copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                          const CudaStream& stream);

// The CUDA runtime's primary context of device 0 (a CUcontext), made current on this thread: for
// a library that takes a context (FFmpeg's CUDA device), so both work in one context whatever
// flags it was created with. Throws UnavailableError without a GPU or driver.
void* runtime_context();

// cudaMemcpy on the legacy default stream: after everything enqueued there, returns when done.
enum class Direction { to_device, to_host };
void copy(void* dst, const void* src, size_t bytes, Direction direction);

}  // namespace mmprof::gpu
