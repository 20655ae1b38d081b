// Warp-shuffle block reduction. Deliberately written with the warp-32 assumptions a HIP port
// must catch: full 32-bit shuffle mask, lane = tid & 31, warp = tid >> 5, offsets starting at 16,
// and a shared array with one slot per 32-thread warp (blockDim / 32 entries).
#include <cuda_runtime.h>

#define WR_BLOCK 256
#define WR_WARPS (WR_BLOCK / 32)

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    return v;
}

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void warp_reduce_sum(const float* x, float* partial, int n) {
    __shared__ float warp_sums[WR_WARPS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    float v = (i < n) ? x[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = (lane < (int)(blockDim.x / 32)) ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            partial[blockIdx.x] = v;
        }
    }
}

void launch_warp_reduce_sum(const float* x, float* partial, int n, cudaStream_t stream) {
    const int grid = (n + WR_BLOCK - 1) / WR_BLOCK;
    warp_reduce_sum<<<grid, WR_BLOCK, 0, stream>>>(x, partial, n);
}
