#include "gpu/yuv_tensor.hpp"

#include <fmt/format.h>

#include "mmprof/error.hpp"

#ifdef MMPROF_HAVE_CUDA_KERNELS
#include <cuda_runtime_api.h>
#endif

namespace mmprof::gpu {

#ifdef MMPROF_HAVE_CUDA_KERNELS
void yuv_to_tensor(const YuvPlanes& frame, int x, int y, int w, int h, const TensorRow& row) {
  if (w <= 0 || h <= 0 || x < 0 || y < 0 || x + w > frame.width || y + h > frame.height) {
    throw RunError(fmt::format("crop {}x{}+{}+{} is outside the {}x{} frame", w, h, x, y,
                               frame.width, frame.height));
  }
  const auto err = static_cast<cudaError_t>(detail::launch_yuv_to_tensor(frame, x, y, w, h, row));
  if (err != cudaSuccess) {
    throw RunError(
        fmt::format("the YUV-to-tensor kernel did not launch: {}", cudaGetErrorString(err)));
  }
}

void require_kernels() {}

void finish_default_stream() {
  if (const cudaError_t err = cudaStreamSynchronize(cudaStreamLegacy); err != cudaSuccess) {
    throw RunError(fmt::format("decode on the GPU failed: {}", cudaGetErrorString(err)));
  }
}
#else
void yuv_to_tensor(const YuvPlanes&, int, int, int, int, const TensorRow&) {
  require_kernels();
}

void require_kernels() {
  throw UnavailableError("mmprof was built without CUDA kernels (no nvcc at build time)");
}

void finish_default_stream() {}
#endif

}  // namespace mmprof::gpu
