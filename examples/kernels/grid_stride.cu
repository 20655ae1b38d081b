// Grid-stride loop: a fixed, capped grid walks the whole array, so any n (including 0) works.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(0..1<<20), alpha: scalar(-4..4),
// xlate: grid: max(1, min(cdiv(n, 256), 64)), block: 256, op: elementwise
__global__ void grid_stride_scale(const float* x, float* y, int n, float alpha) {
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = alpha * x[i];
    }
}

void launch_grid_stride_scale(const float* x, float* y, int n, float alpha, cudaStream_t stream) {
    const int block = 256;
    int grid = (n + block - 1) / block;
    if (grid > 64) grid = 64;
    if (grid < 1) grid = 1;
    grid_stride_scale<<<grid, block, 0, stream>>>(x, y, n, alpha);
}
