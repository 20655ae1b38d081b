// Safe rewrite: tree reduction with __shfl_down_sync, then a broadcast from lane 0 with __shfl_sync.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 128), block: 128, op: reduction(32)
__global__ void warp_sum_broadcast(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    v = __shfl_sync(0xffffffff, v, 0);
    if (i < n) y[i] = v;
}
