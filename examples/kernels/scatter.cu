// Indexed scatter.
//  * scatter_perm: y[idx[i]] = x[i]; idx is a permutation of 0..n-1, so every slot is written once.
//  * scatter_add:  y[idx[i]] += x[i] with atomicAdd; indices may repeat (index_add / segment sum).
#include <cuda_runtime.h>

// xlate-note: idx must be a permutation of 0..n-1 (repeated indices make the result order-dependent)
// xlate: x: in[n], idx: in[n](perm), y: inout[n], n: size(1..1<<18),
// xlate: grid: cdiv(n, 256), block: 256, op: movement
__global__ void scatter_perm(const float* x, const int* idx, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[idx[i]] = x[i];
    }
}

// xlate: x: in[n], idx: in[n](0..m-1), y: inout[m], n: size(1..1<<18), m: size(1..4096),
// xlate: grid: cdiv(n, 256), block: 256, op: atomic
__global__ void scatter_add(const float* x, const int* idx, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        if (j >= 0 && j < m) atomicAdd(&y[j], x[i]);
    }
}

void launch_scatter_perm(const float* x, const int* idx, float* y, int n, cudaStream_t stream) {
    scatter_perm<<<(n + 255) / 256, 256, 0, stream>>>(x, idx, y, n);
}

void launch_scatter_add(const float* x, const int* idx, float* y, int n, int m, cudaStream_t stream) {
    scatter_add<<<(n + 255) / 256, 256, 0, stream>>>(x, idx, y, n, m);
}
