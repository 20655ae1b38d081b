// Scalar-argument clamp: y = min(max(x, lo), hi), with lo <= hi guaranteed by the ranges.
#include <cuda_runtime.h>

// xlate: x: in[n](-4..4), y: out[n], lo: scalar(-2..0), hi: scalar(0..2), n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void clamp_kernel(const float* x, float* y, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fminf(fmaxf(x[i], lo), hi);
    }
}

void launch_clamp_kernel(const float* x, float* y, float lo, float hi, int n, cudaStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    clamp_kernel<<<grid, block, 0, stream>>>(x, y, lo, hi, n);
}
