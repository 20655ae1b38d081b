// Wrong: the warp leader test is (threadIdx.x & 15) == 0, so lanes 0 and 16 both add the whole
// warp's popcount (a 16-lane assumption): every warp counts twice.
#include <cuda_runtime.h>

// xlate: x: in[n](-1..1), n: size(1..1<<20), thresh: scalar(-1..1), count: inout[1](0..100),
// xlate: grid: cdiv(n, 256), block: 256, op: atomic
__global__ void count_above(const float* x, int n, float thresh, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool pred = (i < n) && (x[i] > thresh);
    unsigned int mask = __ballot_sync(0xffffffff, pred);
    if ((threadIdx.x & 15) == 0) {
        int c = __popc(mask);
        if (c != 0) atomicAdd(count, c);
    }
}
