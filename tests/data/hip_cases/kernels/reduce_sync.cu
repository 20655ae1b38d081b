// Safe rewrite: __reduce_add_sync / __reduce_max_sync become xor-shuffle helpers of width 32.
#include <cuda_runtime.h>

// xlate: x: in[n](-1000..1000), y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void reduce_sync(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? x[i] : 0;
    int s = __reduce_add_sync(0xffffffff, v);
    int m = __reduce_max_sync(0xffffffff, v);
    if (i < n) y[i] = s * 3 + m;
}
