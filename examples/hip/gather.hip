// HIP port of kernels/gather.cu (same algorithm; the device code needs no warp-size changes).
// Indexed gather: y[i] = x[idx[i]] (embedding-lookup style, indices may repeat).
#include <hip/hip_runtime.h>

// xlate: x: in[n], idx: in[m](0..n-1), y: out[m], n: size(1..1<<16), m: size(1..1<<18),
// xlate: grid: cdiv(m, 256), block: 256, op: movement
__global__ void gather(const float* x, const int* idx, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        int j = idx[i];
        y[i] = (j >= 0 && j < n) ? x[j] : 0.0f;
    }
}

void launch_gather(const float* x, const int* idx, float* y, int n, int m, hipStream_t stream) {
    gather<<<(m + 255) / 256, 256, 0, stream>>>(x, idx, y, n, m);
}
