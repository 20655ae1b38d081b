// Wrong: no __syncthreads() between filling the shared tile (and its halo) and reading neighbours,
// so threads at warp boundaries read cells another warp has not stored yet.
#include <cuda_runtime.h>

#define ST_BLOCK 256
#define RADIUS 1

// xlate: x: in[n], y: out[n], n: size(1..1<<20), wl: scalar(-1..1), wc: scalar(-1..1),
// xlate: wr: scalar(-1..1), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void stencil_1d(const float* x, float* y, int n, float wl, float wc, float wr) {
    __shared__ float s[ST_BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s[l] = (g < n) ? x[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS;
        int right = g + ST_BLOCK;
        s[l - RADIUS] = (left >= 0 && left < n) ? x[left] : 0.0f;
        s[l + ST_BLOCK] = (right < n) ? x[right] : 0.0f;
    }
    if (g < n) {
        y[g] = wl * s[l - 1] + wc * s[l] + wr * s[l + 1];
    }
}
