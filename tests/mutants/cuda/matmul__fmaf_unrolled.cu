// Correct: the inner product unrolled with explicit fmaf (one rounding per step instead of two).
#include <cuda_runtime.h>

#define MM_TILE 16

// xlate: A: in[m, k], B: in[k, n], C: out[m, n], m: size(1..300), n: size(1..300), k: size(1..300),
// xlate: grid: (cdiv(n, 16), cdiv(m, 16)), block: (16, 16), op: matmul(k)
__global__ void matmul_tiled(const float* A, const float* B, float* C, int m, int n, int k) {
    __shared__ float As[MM_TILE][MM_TILE];
    __shared__ float Bs[MM_TILE][MM_TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * MM_TILE + ty;
    int col = blockIdx.x * MM_TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < k; t += MM_TILE) {
        As[ty][tx] = (row < m && t + tx < k) ? A[row * k + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < k && col < n) ? B[(t + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < MM_TILE; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
        __syncthreads();
    }
    if (row < m && col < n) C[row * n + col] = acc;
}
