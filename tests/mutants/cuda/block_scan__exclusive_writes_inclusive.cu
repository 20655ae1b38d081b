// Wrong: the exclusive Blelloch kernel adds each element back (an inclusive result).
#include <cuda_runtime.h>

#define BL_THREADS 256
#define BL_ELEMS 512

// xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 512), block: 256, op: scan(512)
__global__ void block_scan_exclusive(const float* x, float* y, int n) {
    __shared__ float s[BL_ELEMS];
    int tid = threadIdx.x;
    int base = blockIdx.x * BL_ELEMS;
    int ia = base + tid;
    int ib = base + tid + BL_THREADS;
    float xa = (ia < n) ? x[ia] : 0.0f;
    float xb = (ib < n) ? x[ib] : 0.0f;
    s[tid] = xa;
    s[tid + BL_THREADS] = xb;
    int offset = 1;
    for (int d = BL_ELEMS >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            s[bi] += s[ai];
        }
        offset <<= 1;
    }
    if (tid == 0) s[BL_ELEMS - 1] = 0.0f;
    for (int d = 1; d < BL_ELEMS; d <<= 1) {
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
    if (ia < n) y[ia] = s[tid] + xa;
    if (ib < n) y[ib] = s[tid + BL_THREADS] + xb;
}
