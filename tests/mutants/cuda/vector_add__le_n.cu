// Wrong: `i <= n` lets thread n write c[n], one past the end.
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        c[i] = a[i] + b[i];
    }
}
