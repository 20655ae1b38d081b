// HIP port of kernels/softmax.cu: row softmax, one 256-thread block per row, shared-memory
// max and sum reductions.
#include <hip/hip_runtime.h>

#define SM_BLOCK 256
#define SM_NEG_BIG (-3.402823466e+38f)

// xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
// xlate: grid: rows, block: 256, op: reduction(cols), values: finite
__global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
    __shared__ float red[SM_BLOCK];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;

    float m = SM_NEG_BIG;
    for (int c = tid; c < cols; c += blockDim.x) {
        m = fmaxf(m, xr[c]);
    }
    red[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    float row_max = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        sum += expf(xr[c] - row_max);
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];

    for (int c = tid; c < cols; c += blockDim.x) {
        yr[c] = expf(xr[c] - row_max) * inv;
    }
}

void launch_softmax_rows(const float* x, float* y, int rows, int cols, hipStream_t stream) {
    hipLaunchKernelGGL(softmax_rows, dim3(rows), dim3(SM_BLOCK), 0, stream, x, y, rows, cols);
}
