// Wrong: the global index uses a hard-coded 256 instead of blockDim.x (512 in the launch), so the
// blocks overlap and the upper half of the array is never written.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), slope: scalar(0..1),
// xlate: grid: cdiv(n, 512), block: 512, op: elementwise
__global__ void leaky_relu(const float* x, float* y, int n, float slope) {
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : slope * v;
    }
}
