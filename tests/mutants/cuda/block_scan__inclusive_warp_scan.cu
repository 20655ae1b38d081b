// Correct: inclusive scan with warp shuffles (__shfl_up_sync) and a scan of the eight warp totals,
// instead of a 256-wide double-buffered Hillis-Steele.
#include <cuda_runtime.h>

#define SCAN_BLOCK 256

// xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 256), block: 256, op: scan(256)
__global__ void block_scan_inclusive(const float* x, float* y, int n) {
    __shared__ float totals[SCAN_BLOCK / 32];
    int tid = threadIdx.x;
    int lane = tid & 31;
    int warp = tid >> 5;
    int i = blockIdx.x * SCAN_BLOCK + tid;
    float v = (i < n) ? x[i] : 0.0f;
    for (int o = 1; o < 32; o <<= 1) {
        float u = __shfl_up_sync(0xffffffff, v, o);
        if (lane >= o) v += u;
    }
    if (lane == 31) totals[warp] = v;
    __syncthreads();
    float carry = 0.0f;
    for (int w = 0; w < warp; ++w) carry += totals[w];
    if (i < n) y[i] = v + carry;
}
