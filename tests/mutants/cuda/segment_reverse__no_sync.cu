// Wrong: no __syncthreads() between staging the segment in shared memory and reading it back
// reversed; thread t reads the cell thread len-1-t (another warp) may not have written yet.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: shmem: block * sizeof(float), op: movement
__global__ void segment_reverse(const float* x, float* y, int n) {
    extern __shared__ float buf[];
    int base = blockIdx.x * blockDim.x;
    int len = n - base;
    if (len > (int)blockDim.x) len = blockDim.x;
    int t = threadIdx.x;
    if (t < len) buf[t] = x[base + t];
    if (t < len) y[base + t] = buf[len - 1 - t];
}
