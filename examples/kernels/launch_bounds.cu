// __launch_bounds__: fused bias + ReLU over a [rows, cols] matrix with a per-column bias,
// compiled for at most 256 threads per block and at least 2 resident blocks per SM.
#include <cuda_runtime.h>

#define LB_THREADS 256
#define LB_MIN_BLOCKS 2

// xlate: x: in[rows, cols], bias: in[cols], y: out[rows, cols], rows: size(1..300),
// xlate: cols: size(1..4096), grid: cdiv(rows * cols, 256), block: 256, op: elementwise
__global__ void __launch_bounds__(LB_THREADS, LB_MIN_BLOCKS)
bias_relu(const float* x, const float* bias, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        float v = x[i] + bias[i % cols];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

void launch_bias_relu(const float* x, const float* bias, float* y, int rows, int cols,
                      cudaStream_t stream) {
    const int total = rows * cols;
    bias_relu<<<(total + LB_THREADS - 1) / LB_THREADS, LB_THREADS, 0, stream>>>(x, bias, y, rows, cols);
}
