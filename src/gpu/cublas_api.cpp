#include "gpu/cublas_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

#include "gpu/cuda_runtime.hpp"
#include "gpu/dl_symbol.hpp"
#include "mmprof/error.hpp"

#ifdef MMPROF_HAVE_CUDA
#include <cublas_api.h>
#endif

namespace mmprof::gpu {

std::vector<std::string> cublas_candidates(const char* env_value) {
  if (env_value != nullptr && *env_value != '\0') return {env_value};
  return {"libcublas.so.13", "libcublas.so"};
}

#ifdef MMPROF_HAVE_CUDA
namespace {

// The function table, filled by dlsym. Signatures are spelled out (not decltype) because
// cublas_api.h also declares C++ overloads of some of them.
struct CublasTable {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  const char* (*status_string)(cublasStatus_t) = nullptr;
  std::string path;
};

CublasTable load_cublas_table() {
  const auto candidates = cublas_candidates(std::getenv(kCublasLibEnv));
  std::string errors;
  for (const std::string& file : candidates) {
    // Never dlclose()d: cuBLAS keeps per-process state for the life of the CUDA context.
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", dlerror());
      continue;
    }
    CublasTable t;
    t.path = file;
    if (dl_bind(lib, "cublasCreate_v2", t.create) && dl_bind(lib, "cublasDestroy_v2", t.destroy) &&
        dl_bind(lib, "cublasSetStream_v2", t.set_stream) &&
        dl_bind(lib, "cublasGemmEx", t.gemm_ex) &&
        dl_bind(lib, "cublasGetStatusString", t.status_string)) {
      return t;
    }
    errors += fmt::format("{}{} lacks a cuBLAS entry point", errors.empty() ? "" : "; ", file);
  }
  throw UnavailableError(fmt::format(
      "step.kind=gemm is unavailable: cuBLAS could not be loaded ({}); set {} to libcublas.so.13",
      errors, kCublasLibEnv));
}

// Loaded once per process; a failure is rethrown to every caller.
const CublasTable& cublas_table() {
  static const CublasTable t = load_cublas_table();
  return t;
}

void check(cublasStatus_t rc, const char* call) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    throw RunError(fmt::format("{} failed: {} ({})", call, cublas_table().status_string(rc),
                               static_cast<int>(rc)));
  }
}

cublasHandle_t as_handle(void* h) {
  return static_cast<cublasHandle_t>(h);
}

}  // namespace

Cublas::Cublas(const CudaStream& stream) {
  require_gpu("step.kind=gemm");
  const CublasTable& t = cublas_table();
  library_ = t.path;
  cublasHandle_t h = nullptr;
  check(t.create(&h), "cublasCreate_v2");
  handle_ = h;
  check(t.set_stream(h, static_cast<cudaStream_t>(stream.native())), "cublasSetStream_v2");
}

Cublas::~Cublas() {
  if (handle_ != nullptr) cublas_table().destroy(as_handle(handle_));
}

void Cublas::gemm_fp16(int m, int n, int k, const void* a, const void* b, void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  check(cublas_table().gemm_ex(as_handle(handle_), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a,
                               CUDA_R_16F, m, b, CUDA_R_16F, k, &beta, c, CUDA_R_16F, m,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

#else  // Built without CUDA: require_gpu() throws before anything below could run.

Cublas::Cublas(const CudaStream&) {
  require_gpu("step.kind=gemm");
}
Cublas::~Cublas() = default;
void Cublas::gemm_fp16(int, int, int, const void*, const void*, void*) {}

#endif

}  // namespace mmprof::gpu
