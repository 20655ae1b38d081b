// HIP port of kernels/coop_groups.cu. HIP's cooperative groups offer thread_block_tile<N> for any
// power-of-two N up to the wavefront size, so the 32-thread tiles of the CUDA source stay legal on
// a 64-wide wavefront (two tiles per wavefront, shuffles of width 32). HIP 5.2's tiles have no
// meta_group_rank()/meta_group_size(), so the tile index and count are computed from the block.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

#define CG_BLOCK 256
#define CG_TILE 32

__device__ float tile_reduce(cg::thread_block_tile<CG_TILE> tile, float v) {
    for (int offset = tile.size() / 2; offset > 0; offset >>= 1) {
        v += tile.shfl_down(v, offset);
    }
    return v;
}

// xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
// xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
__global__ void cg_block_sum(const float* x, float* partial, int n) {
    __shared__ float tile_sums[CG_BLOCK / CG_TILE];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<CG_TILE> tile = cg::tiled_partition<CG_TILE>(block);
    int tile_index = block.thread_rank() / CG_TILE;
    int num_tiles = (block.size() + CG_TILE - 1) / CG_TILE;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    v = tile_reduce(tile, v);
    if (tile.thread_rank() == 0) {
        tile_sums[tile_index] = v;
    }
    block.sync();
    if (tile_index == 0) {
        v = ((int)tile.thread_rank() < num_tiles) ? tile_sums[tile.thread_rank()] : 0.0f;
        v = tile_reduce(tile, v);
        if (tile.thread_rank() == 0) {
            partial[blockIdx.x] = v;
        }
    }
}

void launch_cg_block_sum(const float* x, float* partial, int n, hipStream_t stream) {
    hipLaunchKernelGGL(cg_block_sum, dim3((n + CG_BLOCK - 1) / CG_BLOCK), dim3(CG_BLOCK), 0, stream,
                       x, partial, n);
}
