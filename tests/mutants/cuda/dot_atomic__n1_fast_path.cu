// Wrong only at n = 1: a single-element fast path stores a[0] * b[0] into *result instead of adding
// it to the accumulator.
#include <cuda_runtime.h>

#define DOT_BLOCK 256

// xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
__global__ void dot_atomic(const float* a, const float* b, float* result, int n) {
    __shared__ float cache[DOT_BLOCK];
    int tid = threadIdx.x;
    if (n == 1) {
        if (tid == 0 && blockIdx.x == 0) *result = a[0] * b[0];
        return;
    }
    int i = blockIdx.x * blockDim.x + tid;
    cache[tid] = (i < n) ? a[i] * b[i] : 0.0f;
    __syncthreads();
    for (int s = DOT_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        atomicAdd(result, cache[0]);
    }
}
