// HIP port of kernels/reduce_sum_shared.cu: shared-memory tree reduction, one partial per block.
#include <hip/hip_runtime.h>

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

void launch_block_reduce_sum(const float* x, float* partial, int n, hipStream_t stream) {
    const int grid = (n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;
    hipLaunchKernelGGL(block_reduce_sum, dim3(grid), dim3(REDUCE_BLOCK), 0, stream, x, partial, n);
}
