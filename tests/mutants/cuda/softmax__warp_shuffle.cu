// Correct: the row max and sum reduced with warp shuffles plus one shared slot per warp, instead of a
// 256-slot shared tree.
#include <cuda_runtime.h>

#define SM_BLOCK 256

__device__ float block_max(float v, float* slots) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = slots[0];
    for (int w = 1; w < SM_BLOCK / 32; ++w) r = fmaxf(r, slots[w]);
    __syncthreads();
    return r;
}

__device__ float block_sum(float v, float* slots) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0.0f;
    for (int w = 0; w < SM_BLOCK / 32; ++w) r += slots[w];
    __syncthreads();
    return r;
}

// xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
// xlate: grid: rows, block: 256, op: reduction(cols), values: finite
__global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
    __shared__ float slots[SM_BLOCK / 32];
    int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float m = -3.402823466e+38f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    float row_max = block_max(m, slots);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - row_max);
    float inv = 1.0f / block_sum(s, slots);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - row_max) * inv;
}
