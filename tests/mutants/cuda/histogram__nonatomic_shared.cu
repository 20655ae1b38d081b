// Wrong: the shared-memory bins are incremented with a plain s_bins[v]++ instead of atomicAdd;
// threads hitting the same bin at once lose increments.
#include <cuda_runtime.h>

#define NUM_BINS 256

// xlate: data: in[n](0..255), bins: inout[256](0..1000), n: size(0..1<<20),
// xlate: grid: max(1, min(cdiv(n, 256), 120)), block: 256, op: atomic
__global__ void histogram_shared(const unsigned char* data, int* bins, int n) {
    __shared__ int s_bins[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        s_bins[b] = 0;
    }
    __syncthreads();
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        s_bins[data[i]]++;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        int count = s_bins[b];
        if (count != 0) {
            atomicAdd(&bins[b], count);
        }
    }
}
