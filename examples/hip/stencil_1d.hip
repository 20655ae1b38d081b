// HIP port of kernels/stencil_1d.cu (same algorithm; the device code needs no warp-size changes).
// 3-point 1-D stencil with a shared-memory halo: y[i] = wl*x[i-1] + wc*x[i] + wr*x[i+1],
// neighbours outside [0, n) read as zero.
#include <hip/hip_runtime.h>

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
    __syncthreads();
    if (g < n) {
        y[g] = wl * s[l - 1] + wc * s[l] + wr * s[l + 1];
    }
}

void launch_stencil_1d(const float* x, float* y, int n, float wl, float wc, float wr,
                       hipStream_t stream) {
    stencil_1d<<<(n + ST_BLOCK - 1) / ST_BLOCK, ST_BLOCK, 0, stream>>>(x, y, n, wl, wc, wr);
}
