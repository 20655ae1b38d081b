// Correct: y = fmaf(a, x, y), one rounding instead of two.
#include <cuda_runtime.h>

// xlate: n: size(1..1<<20), a: scalar(-4..4), x: in[n], y: inout[n],
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
}
