// A port that leans on HIP's vector operators: the CUDA source gets them from the project's helper_math.h,
// the HIP port from hip/hip_vector_types.h (on NVIDIA: the prelude's templates, backends/include).
#include <cuda_runtime.h>
#include "helper_math.h"

// xlate: a: in[n], b: in[n], out: out[n], n: size(1..1<<16), grid: cdiv(n, 128), block: 128, op: elementwise
__global__ void vector_blend(const float4* a, const float4* b, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 s = a[i] * 0.75f;
    s += b[i] - a[i] * 0.5f;
    out[i] = s + b[i];
}
