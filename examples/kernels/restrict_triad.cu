// STREAM triad with __restrict__ pointers (promises no aliasing, enabling read-only loads):
//   a = b + s * c
#include <cuda_runtime.h>

// xlate: a: out[n], b: in[n], c: in[n], s: scalar(-4..4), n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void triad(float* __restrict__ a, const float* __restrict__ b,
                      const float* __restrict__ c, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = b[i] + s * c[i];
    }
}

void launch_triad(float* a, const float* b, const float* c, float s, int n, cudaStream_t stream) {
    triad<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, s, n);
}
