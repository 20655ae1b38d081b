// GELU activation, tanh approximation:
//   y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
#include <cuda_runtime.h>

#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_COEF 0.044715f

// xlate: x: in[n](-6..6), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void gelu_tanh(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = GELU_SQRT_2_OVER_PI * (v + GELU_COEF * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

void launch_gelu_tanh(const float* x, float* y, int n, cudaStream_t stream) {
    const int block = 256;
    gelu_tanh<<<(n + block - 1) / block, block, 0, stream>>>(x, y, n);
}
