// Block sum with cooperative groups: the block is split into 32-thread tiles with
// tiled_partition<32>, each tile reduces with tile.shfl_down, tile 0 reduces the tile sums.
// One partial sum per block.
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define CG_BLOCK 256

__device__ float tile_reduce(cg::thread_block_tile<32> tile, float v) {
    for (int offset = tile.size() / 2; offset > 0; offset >>= 1) {
        v += tile.shfl_down(v, offset);
    }
    return v;
}

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void cg_block_sum(const float* x, float* partial, int n) {
    __shared__ float tile_sums[CG_BLOCK / 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    v = tile_reduce(tile, v);
    if (tile.thread_rank() == 0) {
        tile_sums[tile.meta_group_rank()] = v;
    }
    block.sync();
    if (tile.meta_group_rank() == 0) {
        v = (tile.thread_rank() < tile.meta_group_size()) ? tile_sums[tile.thread_rank()] : 0.0f;
        v = tile_reduce(tile, v);
        if (tile.thread_rank() == 0) {
            partial[blockIdx.x] = v;
        }
    }
}

void launch_cg_block_sum(const float* x, float* partial, int n, cudaStream_t stream) {
    cg_block_sum<<<(n + CG_BLOCK - 1) / CG_BLOCK, CG_BLOCK, 0, stream>>>(x, partial, n);
}
