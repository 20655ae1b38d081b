// Safe rewrite: explicit width 16 with a computed source lane (wrapped to the 16-lane segment).
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: movement
__global__ void shfl_width16(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    int src = (threadIdx.x * 7 + 3);
    float r = __shfl_sync(0xffffffff, v, src, 16) + __shfl_xor_sync(0xffffffff, v, 5, 16);
    if (i < n) y[i] = r;
}
