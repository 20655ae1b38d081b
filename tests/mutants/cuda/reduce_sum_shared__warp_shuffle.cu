// Correct: warp shuffles, then one warp reduces the eight warp sums (another summation order).
#include <cuda_runtime.h>

#define REDUCE_BLOCK 256

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void block_reduce_sum(const float* x, float* partial, int n) {
    __shared__ float sums[REDUCE_BLOCK / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum((i < n) ? x[i] : 0.0f);
    if ((threadIdx.x & 31) == 0) sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = warp_sum(threadIdx.x < REDUCE_BLOCK / 32 ? sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}
