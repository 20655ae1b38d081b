// The device-to-device copy xlate --benchmark measures once per run: the bandwidth a streaming kernel can reach
// on this GPU (bytes read + written per second). One float per thread, like CuPy's `b[...] = a`.
__global__ void xlate_copy(const float* __restrict__ src, float* __restrict__ dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
