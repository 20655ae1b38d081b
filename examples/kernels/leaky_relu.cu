// Leaky ReLU with a runtime negative slope: y = x > 0 ? x : slope * x.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), slope: scalar(0..1),
// xlate: grid: cdiv(n, 512), block: 512, op: elementwise
__global__ void leaky_relu(const float* x, float* y, int n, float slope) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : slope * v;
    }
}

void launch_leaky_relu(const float* x, float* y, int n, float slope, cudaStream_t stream) {
    const int block = 512;
    leaky_relu<<<(n + block - 1) / block, block, 0, stream>>>(x, y, n, slope);
}
