// HIP port of kernels/saxpy.cu: y = a * x + y.
#include <hip/hip_runtime.h>

// xlate: n: size(1..1<<20), a: scalar(-4..4), x: in[n], y: inout[n],
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

void launch_saxpy(int n, float a, const float* x, float* y, hipStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    saxpy<<<grid, block, 0, stream>>>(n, a, x, y);
}
