// Wrong: off-by-one guard `i < n - 1`; y[n - 1] is never written.
#include <cuda_runtime.h>

// xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void sigmoid(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) {
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    }
}
