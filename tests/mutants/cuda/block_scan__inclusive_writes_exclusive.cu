// Wrong: the inclusive Hillis-Steele kernel writes the exclusive result (its sum minus its own
// element).
#include <cuda_runtime.h>

#define SCAN_BLOCK 256

// xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 256), block: 256, op: scan(256)
__global__ void block_scan_inclusive(const float* x, float* y, int n) {
    __shared__ float buf[2][SCAN_BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * SCAN_BLOCK + tid;
    int pout = 0;
    float own = (i < n) ? x[i] : 0.0f;
    buf[pout][tid] = own;
    __syncthreads();
    for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
        int pin = pout;
        pout = 1 - pout;
        float v = buf[pin][tid];
        if (tid >= offset) v += buf[pin][tid - offset];
        buf[pout][tid] = v;
        __syncthreads();
    }
    if (i < n) y[i] = buf[pout][tid] - own;
}
