// BLAS-1 saxpy: y = a * x + y (y is read and written).
#include <cuda_runtime.h>

// xlate: n: size(1..1<<20), a: scalar(-4..4), x: in[n], y: inout[n],
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

void launch_saxpy(int n, float a, const float* x, float* y, cudaStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    saxpy<<<grid, block, 0, stream>>>(n, a, x, y);
}
