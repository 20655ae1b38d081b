// Wrong: no `if (i < n)` guard; the threads of the last block past n write beyond y.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
}
