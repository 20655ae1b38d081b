// HIP port of kernels/vector_add.cu: c = a + b.
#include <hip/hip_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

void launch_vector_add(const float* a, const float* b, float* c, int n, hipStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    hipLaunchKernelGGL(vector_add, dim3(grid), dim3(block), 0, stream, a, b, c, n);
}
