// HIP port of kernels/warp_reduce.cu, written warp-size-correct: AMD CDNA GPUs (gfx90a) run
// 64-wide wavefronts, so lane/warp come from warpSize, the shuffle ladder starts at warpSize/2,
// HIP's __shfl_down takes no mask, and the per-warp shared array is sized for the smallest
// possible warp (32), which is enough for any warpSize >= 32.
#include <hip/hip_runtime.h>

#define WR_BLOCK 256
#define WR_MAX_WARPS (WR_BLOCK / 32)

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        v += __shfl_down(v, offset);
    }
    return v;
}

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void warp_reduce_sum(const float* x, float* partial, int n) {
    __shared__ float warp_sums[WR_MAX_WARPS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int num_warps = (blockDim.x + warpSize - 1) / warpSize;
    float v = (i < n) ? x[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = (lane < num_warps) ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            partial[blockIdx.x] = v;
        }
    }
}

void launch_warp_reduce_sum(const float* x, float* partial, int n, hipStream_t stream) {
    const int grid = (n + WR_BLOCK - 1) / WR_BLOCK;
    hipLaunchKernelGGL(warp_reduce_sum, dim3(grid), dim3(WR_BLOCK), 0, stream, x, partial, n);
}
