// Wrong only at n = 1: the last element is peeled off the grid-stride loop and written by thread 0
// under `last > 0` instead of `last >= 0`, so for n = 1 nothing is written.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(0..1<<20), alpha: scalar(-4..4),
// xlate: grid: max(1, min(cdiv(n, 256), 64)), block: 256, op: elementwise
__global__ void grid_stride_scale(const float* x, float* y, int n, float alpha) {
    int stride = blockDim.x * gridDim.x;
    int last = n - 1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < last; i += stride) {
        y[i] = alpha * x[i];
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && last > 0) {
        y[last] = alpha * x[last];
    }
}
