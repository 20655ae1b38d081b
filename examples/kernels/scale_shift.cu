// Scalar-argument affine map: y = a * x + b.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], a: scalar(-8..8), b: scalar(-8..8), n: size(1..1<<20),
// xlate: grid: cdiv(n, 128), block: 128, op: elementwise
__global__ void scale_shift(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + b;
    }
}

void launch_scale_shift(const float* x, float* y, float a, float b, int n, cudaStream_t stream) {
    const int block = 128;
    const int grid = (n + block - 1) / block;
    scale_shift<<<grid, block, 0, stream>>>(x, y, a, b, n);
}
