// Vectorised vector add: each thread moves one float4 (16-byte loads/stores). Needs n % 4 == 0
// and 16-byte aligned buffers (cudaMalloc guarantees 256-byte alignment).
#include <cuda_runtime.h>

// xlate: a: in[n], b: in[n], c: out[n], n: size(4..1<<20), where: n % 4 == 0,
// xlate: grid: cdiv(n / 4, 256), block: 256, op: elementwise
__global__ void vector_add_vec4(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 va = reinterpret_cast<const float4*>(a)[i];
        float4 vb = reinterpret_cast<const float4*>(b)[i];
        float4 vc;
        vc.x = va.x + vb.x;
        vc.y = va.y + vb.y;
        vc.z = va.z + vb.z;
        vc.w = va.w + vb.w;
        reinterpret_cast<float4*>(c)[i] = vc;
    }
}

void launch_vector_add_vec4(const float* a, const float* b, float* c, int n, cudaStream_t stream) {
    const int block = 256;
    const int grid = (n / 4 + block - 1) / block;
    vector_add_vec4<<<grid, block, 0, stream>>>(a, b, c, n);
}
