// Safe rewrite: inclusive warp scan with __shfl_up_sync and a loop to 32 (width 32 in the port).
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: scan(32)
__global__ void warp_scan(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = (i < n) ? x[i] : 0.0f;
    for (int d = 1; d < 32; d <<= 1) {
        float t = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) v += t;
    }
    if (i < n) y[i] = v;
}
