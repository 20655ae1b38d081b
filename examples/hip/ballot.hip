// HIP port of kernels/ballot.cu. HIP's __ballot takes no mask and returns a 64-bit mask (one bit
// per lane of a wavefront of up to 64), so the popcount is __popcll and the leader is
// lane 0 of each warpSize-wide wavefront.
#include <hip/hip_runtime.h>

// xlate: x: in[n](-1..1), n: size(1..1<<20), thresh: scalar(-1..1), count: inout[1](0..100),
// xlate: grid: cdiv(n, 256), block: 256, op: atomic
__global__ void count_above(const float* x, int n, float thresh, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred = (i < n) && (x[i] > thresh);
    unsigned long long mask = __ballot(pred);
    if (threadIdx.x % warpSize == 0) {
        int c = __popcll(mask);
        if (c != 0) atomicAdd(count, c);
    }
}

void launch_count_above(const float* x, int n, float thresh, int* count, hipStream_t stream) {
    hipLaunchKernelGGL(count_above, dim3((n + 255) / 256), dim3(256), 0, stream, x, n, thresh, count);
}
