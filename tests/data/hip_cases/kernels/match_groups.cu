// Masks that are not the full warp: __match_any_sync groups lanes by key, and each group then votes, reduces
// and broadcasts from its leader with the group's own mask; a ballot is cut to the lanes below (PTX
// %lanemask_lt). The port keeps every mask (compat helpers that honour it).
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned lanes_below() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// xlate: x: in[n](-2..2), y: out[n], z: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void match_groups(const float* x, int* y, int* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int key = (i < n) ? (int)(x[i] * 2.0f) : 9;
    unsigned peers = __match_any_sync(0xffffffff, key);
    int leader = __ffs(peers) - 1;
    int from_leader = __shfl_sync(peers, i, leader);
    unsigned odd = __ballot_sync(peers, i & 1);
    unsigned sum = __reduce_add_sync(peers, (unsigned)(i & 7));
    unsigned below = __ballot_sync(0xffffffff, key > 0) & lanes_below();
    if (i < n) {
        y[i] = __popc(peers) + 64 * (i - from_leader) + 4096 * __popc(below);
        z[i] = __popc(odd) + 64 * (int)sum;
    }
}
