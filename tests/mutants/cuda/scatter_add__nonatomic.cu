// Wrong: y[j] += x[i] as a plain read-modify-write instead of atomicAdd; repeated indices race.
#include <cuda_runtime.h>

// xlate: x: in[n], idx: in[n](0..m-1), y: inout[m], n: size(1..1<<18), m: size(1..4096),
// xlate: grid: cdiv(n, 256), block: 256, op: atomic
__global__ void scatter_add(const float* x, const int* idx, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        if (j >= 0 && j < m) y[j] += x[i];
    }
}
