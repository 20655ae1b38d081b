// Wrong: rectifies x in place and then copies it to y: the input buffer is overwritten.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void relu(float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (!(x[i] > 0.0f)) x[i] = 0.0f;
        y[i] = x[i];
    }
}
