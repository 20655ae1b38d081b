// Wrong only at large sizes: the global index is held in an unsigned short, which wraps at 65536;
// threads past that rewrite low elements and c[65536..n) is never written. (A 32-bit index cannot
// overflow within the gate's GPU size cap of 2^22 elements; the width bug is the same.)
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    unsigned short i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
