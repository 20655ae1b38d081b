// Correct: interleaved addressing (tid % (2 s) == 0 adds tid + s), the textbook first version; a
// different pairing of the terms.
#include <cuda_runtime.h>

#define REDUCE_BLOCK 256

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void block_reduce_sum(const float* x, float* partial, int n) {
    __shared__ float sdata[REDUCE_BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s <<= 1) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}
