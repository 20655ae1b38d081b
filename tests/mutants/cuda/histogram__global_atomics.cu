// Correct: no privatisation; every byte increments the global bin with atomicAdd.
#include <cuda_runtime.h>

// xlate: data: in[n](0..255), bins: inout[256](0..1000), n: size(0..1<<20),
// xlate: grid: max(1, min(cdiv(n, 256), 120)), block: 256, op: atomic
__global__ void histogram_shared(const unsigned char* data, int* bins, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[i]], 1);
    }
}
