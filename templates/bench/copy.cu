// The device-to-device copy xlate --benchmark measures once per run: the bandwidth a streaming kernel can reach
// on this GPU (bytes read + written per second). Four floats per thread in one 128-bit load and store: one float
// per thread leaves too few bytes in flight (2.7 TB/s on an H200, where 128-bit copies and Triton ports reach
// 4.1 TB/s), which made ports score above 100 % of "copy".
__global__ void xlate_copy(const float* __restrict__ src, float* __restrict__ dst, long long n) {
    long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < n) {
        *reinterpret_cast<float4*>(dst + i) = *reinterpret_cast<const float4*>(src + i);
    } else {
        for (; i < n; ++i) dst[i] = src[i];
    }
}
