// Safe rewrite: thread_block_tile<32>::meta_group_rank/size (missing in HIP 5.2) from the thread block.
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// xlate: y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void tile_meta(int* y, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = tile.meta_group_rank() * 100 + tile.meta_group_size() * 10000 + tile.thread_rank();
    v += (int)tile.shfl_down((float)tile.thread_rank(), 1) * 1000000;
    if (i < n) y[i] = v;
}
