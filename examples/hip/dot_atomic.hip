// HIP port of kernels/dot_atomic.cu (same algorithm; the device code needs no warp-size changes).
// Dot product: each block reduces its products in shared memory, then thread 0 atomically adds
// the block partial into *result (which is accumulated into, not cleared).
#include <hip/hip_runtime.h>

#define DOT_BLOCK 256

// xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
__global__ void dot_atomic(const float* a, const float* b, float* result, int n) {
    __shared__ float cache[DOT_BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    cache[tid] = (i < n) ? a[i] * b[i] : 0.0f;
    __syncthreads();
    for (int s = DOT_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        atomicAdd(result, cache[0]);
    }
}

void launch_dot_atomic(const float* a, const float* b, float* result, int n, hipStream_t stream) {
    dot_atomic<<<(n + DOT_BLOCK - 1) / DOT_BLOCK, DOT_BLOCK, 0, stream>>>(a, b, result, n);
}
