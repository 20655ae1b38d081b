// Inline PTX.
//  * ptx_add: c = a + b computed with an explicit `add.f32` instruction.
//  * ptx_lane_id: writes each thread's hardware lane (%laneid), i.e. i % 32 for a 1-D launch with
//    a block size that is a multiple of 32 -- a warp-size dependence a port has to preserve.
#include <cuda_runtime.h>

__device__ __forceinline__ float add_f32(float a, float b) {
    float r;
    asm volatile("add.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

__device__ __forceinline__ unsigned int lane_id() {
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void ptx_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = add_f32(a[i], b[i]);
    }
}

// xlate: lanes: out[n], n: size(1..1<<16), grid: cdiv(n, 128), block: 128, op: elementwise
__global__ void ptx_lane_id(int* lanes, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lanes[i] = (int)lane_id();
    }
}

void launch_ptx_add(const float* a, const float* b, float* c, int n, cudaStream_t stream) {
    ptx_add<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n);
}

void launch_ptx_lane_id(int* lanes, int n, cudaStream_t stream) {
    ptx_lane_id<<<(n + 127) / 128, 128, 0, stream>>>(lanes, n);
}
