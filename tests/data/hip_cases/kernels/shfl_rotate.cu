// Safe rewrite: __shfl_sync with a computed source lane (wrapped to the warp in the port).
// Lane l reads lane (l + 1) mod 32 of its warp; lane 31 wraps to lane 0 (CUDA takes srcLane mod width).
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: movement
__global__ void shfl_rotate(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = (i < n) ? x[i] : 0.0f;
    float r = __shfl_sync(0xffffffff, v, lane + 1);
    if (i < n) y[i] = r;
}
