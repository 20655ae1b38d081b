// Safe rewrite: warpSize (32 in CUDA) becomes XLATE_WARP_SIZE; lane and warp indices stay CUDA's.
#include <cuda_runtime.h>

// xlate: y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void warpsize_index(int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    if (i < n) y[i] = warp * 1000 + lane * 10 + (int)(blockDim.x / warpSize);
}
