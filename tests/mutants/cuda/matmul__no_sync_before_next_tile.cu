// Wrong: the second __syncthreads() (after the inner product, before the next tile load) is gone;
// fast warps overwrite As/Bs while slow ones still read the previous tile. Only k > 16 has a next tile.
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
        int a_col = t + tx;
        int b_row = t + ty;
        As[ty][tx] = (row < m && a_col < k) ? A[row * k + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < k && col < n) ? B[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < MM_TILE; ++kk) {
            acc += As[ty][kk] * Bs[kk][tx];
        }
    }
    if (row < m && col < n) {
        C[row * n + col] = acc;
    }
}
