// Wrong scalar order: the port declares (b, a) where the source takes (a, b), so it computes
// b * x + a.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], a: scalar(-8..8), b: scalar(-8..8), n: size(1..1<<20),
// xlate: grid: cdiv(n, 128), block: 128, op: elementwise
__global__ void scale_shift(const float* x, float* y, float b, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + b;
    }
}
