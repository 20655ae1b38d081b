// Wrong: exp(x) / sum(exp(x)) without subtracting the row max; expf overflows float32 once
// x > 88.7 (inf / inf = NaN). The corpus range -10..10 cannot reach it: the manifest widens it.
#include <cuda_runtime.h>

#define SM_BLOCK 256

// xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
// xlate: grid: rows, block: 256, op: reduction(cols), values: finite
__global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
    __shared__ float red[SM_BLOCK];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        sum += expf(xr[c]);
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int c = tid; c < cols; c += blockDim.x) {
        yr[c] = expf(xr[c]) * inv;
    }
}
