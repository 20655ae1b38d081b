// The device-to-device copy xlate --benchmark measures once per run when HIP times on this GPU (copy.cu in HIP):
// four floats per thread in one 128-bit load and store.
#include <hip/hip_runtime.h>

__global__ void xlate_copy(const float* __restrict__ src, float* __restrict__ dst, long long n) {
    long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < n) {
        *reinterpret_cast<float4*>(dst + i) = *reinterpret_cast<const float4*>(src + i);
    } else {
        for (; i < n; ++i) dst[i] = src[i];
    }
}
