// HIP port of kernels/dynamic_shared.cu (same algorithm; the device code needs no warp-size changes).
// Dynamic shared memory: each block reverses its own blockDim-element segment of the input
// through an `extern __shared__` buffer sized at launch (blockDim * sizeof(float) bytes).
// The last, partial segment is reversed within its valid length.
#include <hip/hip_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: shmem: block * sizeof(float), op: movement
__global__ void segment_reverse(const float* x, float* y, int n) {
    extern __shared__ float buf[];
    int base = blockIdx.x * blockDim.x;
    int len = n - base;
    if (len > (int)blockDim.x) len = blockDim.x;
    int t = threadIdx.x;
    if (t < len) buf[t] = x[base + t];
    __syncthreads();
    if (t < len) y[base + t] = buf[len - 1 - t];
}

void launch_segment_reverse(const float* x, float* y, int n, hipStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    const size_t shmem = block * sizeof(float);
    hipLaunchKernelGGL(segment_reverse, dim3(grid), dim3(block), shmem, stream, x, y, n);
}
