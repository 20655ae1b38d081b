// Correct: neighbours read straight from global memory (no shared tile, no barrier).
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), wl: scalar(-1..1), wc: scalar(-1..1),
// xlate: wr: scalar(-1..1), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void stencil_1d(const float* x, float* y, int n, float wl, float wc, float wr) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        float l = g > 0 ? x[g - 1] : 0.0f;
        float r = g + 1 < n ? x[g + 1] : 0.0f;
        y[g] = wl * l + wc * x[g] + wr * r;
    }
}
