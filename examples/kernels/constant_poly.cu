// __constant__ memory: evaluate a cubic polynomial with coefficients held in constant memory,
//   y = c[0] + c[1]*x + c[2]*x^2 + c[3]*x^3   (Horner), c = c_poly_coeffs.
// c_poly_coeffs has a static initialiser {1, -0.5, 0.25, -0.125}; set_poly_coeffs() overwrites it
// with cudaMemcpyToSymbolAsync. The reference assumes the initialiser values.
#include <cuda_runtime.h>

#define POLY_DEGREE 3

__constant__ float c_poly_coeffs[POLY_DEGREE + 1] = {1.0f, -0.5f, 0.25f, -0.125f};

// xlate-note: needs __constant__ initialisation
// xlate: x: in[n](-2..2), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
// xlate: op: elementwise
__global__ void poly_eval(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = c_poly_coeffs[POLY_DEGREE];
        for (int d = POLY_DEGREE - 1; d >= 0; --d) {
            acc = acc * v + c_poly_coeffs[d];
        }
        y[i] = acc;
    }
}

// Upload POLY_DEGREE + 1 host coefficients (lowest degree first) into c_poly_coeffs.
cudaError_t set_poly_coeffs(const float* h_coeffs, cudaStream_t stream) {
    return cudaMemcpyToSymbolAsync(c_poly_coeffs, h_coeffs, (POLY_DEGREE + 1) * sizeof(float), 0,
                                   cudaMemcpyHostToDevice, stream);
}

void launch_poly_eval(const float* x, float* y, int n, cudaStream_t stream) {
    poly_eval<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
}
