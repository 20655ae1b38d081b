// Wrong: the Horner loop stops at d > 0, dropping the constant coefficient c[0].
#include <cuda_runtime.h>

#define POLY_DEGREE 3

__constant__ float c_poly_coeffs[POLY_DEGREE + 1] = {1.0f, -0.5f, 0.25f, -0.125f};

// xlate: x: in[n](-2..2), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void poly_eval(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = c_poly_coeffs[POLY_DEGREE];
        for (int d = POLY_DEGREE - 1; d > 0; --d) {
            acc = acc * v + c_poly_coeffs[d];
        }
        y[i] = acc * v;
    }
}
