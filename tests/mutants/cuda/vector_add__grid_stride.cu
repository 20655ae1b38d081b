// Correct: a grid-stride loop (covers any n with whatever grid is launched).
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        c[i] = a[i] + b[i];
    }
}
