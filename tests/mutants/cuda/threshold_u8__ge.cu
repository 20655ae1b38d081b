// Wrong: `src >= thresh` instead of `src > thresh`; pixels equal to the threshold become 255.
#include <cuda_runtime.h>

// xlate: src: in[n](0..255), dst: out[n], n: size(1..1<<20), thresh: scalar(0..255),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void threshold_u8(const unsigned char* src, unsigned char* dst, int n, int thresh) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = (src[i] >= thresh) ? (unsigned char)255 : (unsigned char)0;
    }
}
