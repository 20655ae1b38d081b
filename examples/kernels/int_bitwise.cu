// Integer kernels.
//  * xor_mask: c = (a ^ b) & mask on int32.
//  * hash_u32: a multiplicative (Knuth) hash with xor-shift finalisation on uint32; the multiply
//    wraps modulo 2^32 by design.
#include <cuda_runtime.h>

#define KNUTH_MULT 2654435761u

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20), mask: scalar(0..65535),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void xor_mask(const int* a, const int* b, int* c, int n, int mask) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = (a[i] ^ b[i]) & mask;
    }
}

// xlate: x: in[n], h: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void hash_u32(const unsigned int* x, unsigned int* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = x[i] * KNUTH_MULT;
        v ^= v >> 16;
        h[i] = v;
    }
}

void launch_xor_mask(const int* a, const int* b, int* c, int n, int mask, cudaStream_t stream) {
    xor_mask<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n, mask);
}

void launch_hash_u32(const unsigned int* x, unsigned int* h, int n, cudaStream_t stream) {
    hash_u32<<<(n + 255) / 256, 256, 0, stream>>>(x, h, n);
}
