// Safe rewrite: thread_block_tile<16>::any/all/ballot (missing in HIP 5.2) as shuffles inside the tile.
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// xlate: x: in[n], y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void tile_vote(const float* x, int* y, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int positive = i < n && x[i] > 0.0f;
    int some = tile.any(positive);
    int every = tile.all(positive || i >= n);
    unsigned bits = tile.ballot(positive);
    if (i < n) y[i] = some + 2 * every + 4 * (int)(bits & 0xffffu);
}
