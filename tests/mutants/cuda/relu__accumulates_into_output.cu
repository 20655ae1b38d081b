// Wrong: y[i] += relu(x[i]) as if y were zero-initialised; y is an output with garbage contents,
// so the result depends on memory that is not an input.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] += v > 0.0f ? v : 0.0f;
    }
}
