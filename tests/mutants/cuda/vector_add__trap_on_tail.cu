// Wrong: a bounds "check" that traps instead of skipping: every launch whose last block has threads
// past n (n not a multiple of 256) aborts the kernel.
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) __trap();
    c[i] = a[i] + b[i];
}
