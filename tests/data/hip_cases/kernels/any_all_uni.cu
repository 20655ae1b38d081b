// Safe rewrite: __any_sync / __all_sync / __uni_sync / __activemask on 32-lane warps.
#include <cuda_runtime.h>

// xlate: x: in[n](-1..1), y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void any_all_uni(const float* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = (i < n) && (x[i] > 0.5f);
    int a = __any_sync(0xffffffff, p);
    int b = __all_sync(0xffffffff, p);
    int u = __uni_sync(0xffffffff, p);
    int c = __popc(__activemask());
    if (i < n) y[i] = a + 2 * b + 4 * u + 8 * c;
}
