// Safe rewrite: __syncwarp between shared-memory writes and reads of other lanes of the same warp.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 128), block: 128, op: movement
__global__ void warp_reverse(const float* x, float* y, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int base = threadIdx.x & ~31;
    s[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    __syncwarp();
    float v = s[base + 31 - lane];
    if (i < n) y[i] = v;
}
