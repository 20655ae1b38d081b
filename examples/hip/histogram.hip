// HIP port of kernels/histogram.cu: shared-memory privatised 256-bin histogram with atomics.
#include <hip/hip_runtime.h>

#define NUM_BINS 256
#define HIST_BLOCK 256
#define HIST_MAX_GRID 120

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
        atomicAdd(&s_bins[data[i]], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        int count = s_bins[b];
        if (count != 0) {
            atomicAdd(&bins[b], count);
        }
    }
}

void launch_histogram_shared(const unsigned char* data, int* bins, int n, hipStream_t stream) {
    int grid = (n + HIST_BLOCK - 1) / HIST_BLOCK;
    if (grid > HIST_MAX_GRID) grid = HIST_MAX_GRID;
    if (grid < 1) grid = 1;
    hipLaunchKernelGGL(histogram_shared, dim3(grid), dim3(HIST_BLOCK), 0, stream, data, bins, n);
}
