// Compat rewrite: cooperative_groups::reduce / inclusive_scan / exclusive_scan and their operator functors
// (HIP has them only in the ROCm 7.x previews) -> the compat block's xlate_cg:: versions.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

// xlate: x: in[n](-8..8), y: out[n], n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void cg_reduce(const int* x, int* y, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    int s = cg::reduce(tile, v, cg::plus<int>());
    int mx = cg::reduce(tile, v, cg::greater<int>());
    int mn = cg::reduce(tile, v, cg::less<int>());
    int inc = cg::inclusive_scan(tile, v);
    int exc = cg::exclusive_scan(tile, v, cg::plus<int>());
    if (i < n) y[i] = s + 1000 * mx + 100000 * mn + 10000000 * (inc - exc - v);
}
