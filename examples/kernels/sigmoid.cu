// Logistic sigmoid: y = 1 / (1 + exp(-x)).
#include <cuda_runtime.h>

// xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void sigmoid(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    }
}

void launch_sigmoid(const float* x, float* y, int n, cudaStream_t stream) {
    const int block = 256;
    sigmoid<<<(n + block - 1) / block, block, 0, stream>>>(x, y, n);
}
