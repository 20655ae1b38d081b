// Shared-memory tree reduction: every block sums its 256 inputs and writes one partial sum.
// The host (or a second pass) adds the cdiv(n, 256) partials.
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
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

void launch_block_reduce_sum(const float* x, float* partial, int n, cudaStream_t stream) {
    const int grid = (n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;
    block_reduce_sum<<<grid, REDUCE_BLOCK, 0, stream>>>(x, partial, n);
}
