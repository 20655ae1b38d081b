// Correct: each warp reduces its products with shuffles and adds its sum atomically (eight atomics
// per block instead of one; the addition order is not fixed).
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
__global__ void dot_atomic(const float* a, const float* b, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? a[i] * b[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(result, v);
}
