// ReLU activation: y = max(x, 0).
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

void launch_relu(const float* x, float* y, int n, cudaStream_t stream) {
    const int block = 256;
    relu<<<(n + block - 1) / block, block, 0, stream>>>(x, y, n);
}
