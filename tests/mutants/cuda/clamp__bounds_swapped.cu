// Wrong scalar order: the port declares (hi, lo) where the source takes (lo, hi).
#include <cuda_runtime.h>

// xlate: x: in[n](-4..4), y: out[n], lo: scalar(-2..0), hi: scalar(0..2), n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void clamp_kernel(const float* x, float* y, float hi, float lo, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fminf(fmaxf(x[i], lo), hi);
    }
}
