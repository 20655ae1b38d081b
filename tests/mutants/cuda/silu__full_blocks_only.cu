// Wrong: only whole 256-element blocks are processed (bound (n / 256) * 256); the partial tail
// block is never written.
#include <cuda_runtime.h>

// xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void silu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (n / 256) * 256) {
        float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
}
