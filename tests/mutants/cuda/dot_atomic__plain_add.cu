// Wrong: thread 0 of each block adds its partial with a plain *result += instead of atomicAdd;
// blocks race on the accumulator (only n > 256, i.e. more than one block, can show it).
#include <cuda_runtime.h>

#define DOT_BLOCK 256

// xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
__global__ void dot_atomic(const float* a, const float* b, float* result, int n) {
    __shared__ float cache[DOT_BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    cache[tid] = (i < n) ? a[i] * b[i] : 0.0f;
    __syncthreads();
    for (int s = DOT_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        *result += cache[0];
    }
}
