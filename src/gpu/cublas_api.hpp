#pragma once
// cuBLAS, loaded at run time. mmprof has no link dependency on cuBLAS: with cublasLt it is over
// 500 MB, and only step.kind=gemm needs it, so `mmprof --help`, workers and every other subcommand
// never map it. The only file that names cuBLAS functions; no cuBLAS type leaves it.
#include <string>
#include <vector>

namespace mmprof::gpu {

inline constexpr const char* kCublasLibEnv = "MMPROF_CUBLAS_LIB";

// The files dlopen() tries, in order. A set $MMPROF_CUBLAS_LIB is the only candidate (the user
// named a library; silently loading another would measure the wrong one); otherwise the CUDA 13
// soname, then the unversioned development link.
std::vector<std::string> cublas_candidates(const char* env_value);

class CudaStream;

// A cuBLAS handle bound to one stream. Throws UnavailableError when no GPU is usable or the
// library cannot be loaded (naming every file tried), RunError when a call fails.
class Cublas {
 public:
  explicit Cublas(const CudaStream& stream);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // C (m x n) = A (m x k) * B (k x n), all FP16 column-major with leading dimensions m, k, m,
  // accumulated in FP32 (tensor cores), enqueued on the stream.
  void gemm_fp16(int m, int n, int k, const void* a, const void* b, void* c);
  // The file the library was loaded from.
  const std::string& library() const noexcept { return library_; }

 private:
  void* handle_ = nullptr;  // a cublasHandle_t
  std::string library_;
};

}  // namespace mmprof::gpu
