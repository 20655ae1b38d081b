// Hard-swish written with preprocessor constants and function-like macros:
//   y = x * clamp(x + 3, 0, 6) / 6
#include <cuda_runtime.h>

#define HS_THREADS 256
#define HS_OFFSET 3.0f
#define HS_CAP 6.0f
#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : ((v) > (hi) ? (hi) : (v)))
#define GLOBAL_TID() (blockIdx.x * blockDim.x + threadIdx.x)
#define CDIV(a, b) (((a) + (b) - 1) / (b))

// xlate: x: in[n](-8..8), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void hardswish(const float* x, float* y, int n) {
    int i = GLOBAL_TID();
    if (i < n) {
        float v = x[i];
        y[i] = v * CLAMP(v + HS_OFFSET, 0.0f, HS_CAP) / HS_CAP;
    }
}

void launch_hardswish(const float* x, float* y, int n, cudaStream_t stream) {
    hardswish<<<CDIV(n, HS_THREADS), HS_THREADS, 0, stream>>>(x, y, n);
}
