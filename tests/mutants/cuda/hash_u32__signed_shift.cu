// Wrong: the hash state is a signed int, so `v >> 16` sign-extends instead of shifting in zeros.
#include <cuda_runtime.h>

#define KNUTH_MULT 2654435761u

// xlate: x: in[n], h: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void hash_u32(const unsigned int* x, unsigned int* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = (int)(x[i] * KNUTH_MULT);
        v ^= v >> 16;
        h[i] = (unsigned int)v;
    }
}
