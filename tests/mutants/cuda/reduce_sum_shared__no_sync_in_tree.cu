// Wrong: the __syncthreads() inside the tree loop is gone, so a step reads partial sums other
// warps have not written yet (a shared-memory race).
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
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
