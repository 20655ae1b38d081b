// Wrong: block_sum_256 drops the __syncthreads() after reading red[0], so the variance pass can
// overwrite red[0] before every thread has read the mean's total.
#include <cuda_runtime.h>

#define LN_BLOCK 256
#define LN_EPS 1e-5f

__device__ float block_sum_256(float v, float* red) {
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = LN_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    return red[0];
}

// xlate: x: in[rows, cols](-4..4), gamma: in[cols], beta: in[cols], y: out[rows, cols],
// xlate: rows: size(1..256), cols: size(1..2048), grid: rows, block: 256,
// xlate: op: reduction(cols), values: finite
__global__ void layernorm_rows(const float* x, const float* gamma, const float* beta, float* y,
                               int rows, int cols) {
    __shared__ float red[LN_BLOCK];
    int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    float mean = block_sum_256(s, red) / cols;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = xr[c] - mean;
        sq += d * d;
    }
    float var = block_sum_256(sq, red) / cols;
    float rstd = rsqrtf(var + LN_EPS);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
