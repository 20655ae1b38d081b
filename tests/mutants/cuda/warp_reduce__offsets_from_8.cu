// Wrong: the shuffle reduction starts at offset 8 (a 16-lane assumption), so each "warp sum" only
// covers lanes 0..15.
#include <cuda_runtime.h>

#define WR_BLOCK 256
#define WR_WARPS (WR_BLOCK / 32)

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 8; offset > 0; offset >>= 1) {
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
