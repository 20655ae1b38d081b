// Safe rewrite: 32-bit ballot masks kept by xlate_ballot_sync. Each thread writes the number of voters in
// its warp, its rank among them (popc of the lanes below it), and the first voter (ffs).
#include <cuda_runtime.h>

// xlate: x: in[n](-1..1), y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void ballot_rank(const float* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    bool vote = (i < n) && (x[i] > 0.0f);
    unsigned int mask = __ballot_sync(0xffffffff, vote);
    int below = __popc(mask & ((1u << lane) - 1u));
    if (i < n) y[i] = __popc(mask) * 10000 + below * 100 + __ffs(mask);
}
