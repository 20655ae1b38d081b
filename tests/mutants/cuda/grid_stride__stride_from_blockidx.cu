// Wrong: the stride is blockDim.x * blockIdx.x (typo for gridDim.x); it is 0 in block 0, whose
// threads never leave the loop.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(0..1<<20), alpha: scalar(-4..4),
// xlate: grid: max(1, min(cdiv(n, 256), 64)), block: 256, op: elementwise
__global__ void grid_stride_scale(const float* x, float* y, int n, float alpha) {
    int stride = blockDim.x * blockIdx.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = alpha * x[i];
    }
}
