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

// A warp tile's float sum written as its bits: the port must add in CUDA's order (its reduce of a tile is a
// butterfly, the widest pairs first), or sums of values of mixed magnitude round differently.
// xlate: x: in[n](-1e4..1e4), y: out[n] as int32, n: size(1..1<<16), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void cg_reduce_float_bits(const float* x, int* y, int n) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] * (1.0f + (i % 7) * 1e3f) : 0.0f;
    float s = cg::reduce(warp, v, cg::plus<float>());
    if (i < n) y[i] = __float_as_int(s);
}
