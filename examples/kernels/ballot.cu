// Warp vote: count the elements above a threshold. Each warp votes with __ballot_sync, lane 0
// adds the popcount of the ballot mask to a global counter. Out-of-range threads still take part
// in the vote (with a false predicate) because the full mask names all 32 lanes.
#include <cuda_runtime.h>

// xlate: x: in[n](-1..1), n: size(1..1<<20), thresh: scalar(-1..1), count: inout[1](0..100),
// xlate: grid: cdiv(n, 256), block: 256, op: atomic
__global__ void count_above(const float* x, int n, float thresh, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool pred = (i < n) && (x[i] > thresh);
    unsigned int mask = __ballot_sync(0xffffffff, pred);
    if ((threadIdx.x & 31) == 0) {
        int c = __popc(mask);
        if (c != 0) atomicAdd(count, c);
    }
}

void launch_count_above(const float* x, int n, float thresh, int* count, cudaStream_t stream) {
    count_above<<<(n + 255) / 256, 256, 0, stream>>>(x, n, thresh, count);
}
