// HIP port of kernels/block_scan.cu (same algorithm; the device code needs no warp-size changes).
// Per-block prefix sums. Each block scans its own segment of the input independently (no carry
// between blocks; a later pass would add block offsets):
//  * block_scan_inclusive: Hillis-Steele, double-buffered, 256 threads, 256-element segments.
//  * block_scan_exclusive: Blelloch up-sweep/down-sweep, 256 threads, 512-element segments.
#include <hip/hip_runtime.h>

#define SCAN_BLOCK 256
#define BL_THREADS 256
#define BL_ELEMS 512

// xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 256), block: 256, op: scan(256)
__global__ void block_scan_inclusive(const float* x, float* y, int n) {
    __shared__ float buf[2][SCAN_BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * SCAN_BLOCK + tid;
    int pout = 0;
    buf[pout][tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
        int pin = pout;
        pout = 1 - pout;
        float v = buf[pin][tid];
        if (tid >= offset) v += buf[pin][tid - offset];
        buf[pout][tid] = v;
        __syncthreads();
    }
    if (i < n) y[i] = buf[pout][tid];
}

// xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 512), block: 256, op: scan(512)
__global__ void block_scan_exclusive(const float* x, float* y, int n) {
    __shared__ float s[BL_ELEMS];
    int tid = threadIdx.x;
    int base = blockIdx.x * BL_ELEMS;
    int ia = base + tid;
    int ib = base + tid + BL_THREADS;
    s[tid] = (ia < n) ? x[ia] : 0.0f;
    s[tid + BL_THREADS] = (ib < n) ? x[ib] : 0.0f;

    int offset = 1;
    for (int d = BL_ELEMS >> 1; d > 0; d >>= 1) {  // up-sweep (reduce)
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            s[bi] += s[ai];
        }
        offset <<= 1;
    }
    if (tid == 0) s[BL_ELEMS - 1] = 0.0f;
    for (int d = 1; d < BL_ELEMS; d <<= 1) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            float t = s[ai];
            s[ai] = s[bi];
            s[bi] += t;
        }
    }
    __syncthreads();
    if (ia < n) y[ia] = s[tid];
    if (ib < n) y[ib] = s[tid + BL_THREADS];
}

void launch_block_scan_inclusive(const float* x, float* y, int n, hipStream_t stream) {
    const int grid = (n + SCAN_BLOCK - 1) / SCAN_BLOCK;
    block_scan_inclusive<<<grid, SCAN_BLOCK, 0, stream>>>(x, y, n);
}

void launch_block_scan_exclusive(const float* x, float* y, int n, hipStream_t stream) {
    const int grid = (n + BL_ELEMS - 1) / BL_ELEMS;
    block_scan_exclusive<<<grid, BL_THREADS, 0, stream>>>(x, y, n);
}
