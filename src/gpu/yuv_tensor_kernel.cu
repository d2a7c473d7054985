// The kernel of yuv_tensor.hpp: one thread per output pixel, each running gpu/yuv_pixel.hpp.
#include <cuda_runtime.h>

#include "gpu/yuv_pixel.hpp"

namespace mmprof::gpu::detail {
namespace {

__global__ void yuv_to_tensor_kernel(YuvPlanes f, int cx, int cy, int cw, int ch, TensorRow row) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x < row.size && y < row.size) pixel::write_pixel(f, cx, cy, cw, ch, row, x, y);
}

}  // namespace

int launch_yuv_to_tensor(const YuvPlanes& frame, int x, int y, int w, int h, const TensorRow& row) {
  const dim3 block(16, 16);
  const dim3 grid((row.size + block.x - 1) / block.x, (row.size + block.y - 1) / block.y);
  yuv_to_tensor_kernel<<<grid, block, 0, cudaStreamLegacy>>>(frame, x, y, w, h, row);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace mmprof::gpu::detail
