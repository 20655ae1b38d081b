// SiLU / swish activation: y = x * sigmoid(x) = x / (1 + exp(-x)).
#include <cuda_runtime.h>

// xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void silu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
}

void launch_silu(const float* x, float* y, int n, cudaStream_t stream) {
    const int block = 256;
    silu<<<(n + block - 1) / block, block, 0, stream>>>(x, y, n);
}
