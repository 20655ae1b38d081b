// Correct: the float4 replaced by four scalar loads/stores per thread (no vectorisation).
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(4..1<<20), where: n % 4 == 0,
// xlate: grid: cdiv(n / 4, 256), block: 256, op: elementwise
__global__ void vector_add_vec4(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 4) {
        for (int k = 0; k < 4; ++k) c[4 * i + k] = a[4 * i + k] + b[4 * i + k];
    }
}
