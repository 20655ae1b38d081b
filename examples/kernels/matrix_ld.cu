// 2-D elementwise over row-major matrices with leading dimensions (BLAS-style strided rows):
//   Y[r, c] = alpha * X[r, c] + Y[r, c]   for r < rows, c < cols
// X is stored with row stride ldx, Y with row stride ldy; padding columns (c >= cols) of Y are
// left untouched.
#include <cuda_runtime.h>

#define MLD_BX 32
#define MLD_BY 8

// xlate: rows: size(1..300), cols: size(1..300), alpha: scalar(-2..2), X: in[rows, ldx],
// xlate: ldx: size(1..320), Y: inout[rows, ldy], ldy: size(1..320),
// xlate: where: ldx >= cols and ldy >= cols,
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 8)), block: (32, 8), op: elementwise
__global__ void matrix_axpy_ld(int rows, int cols, float alpha, const float* X, int ldx, float* Y,
                               int ldy) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        Y[r * ldy + c] = alpha * X[r * ldx + c] + Y[r * ldy + c];
    }
}

void launch_matrix_axpy_ld(int rows, int cols, float alpha, const float* X, int ldx, float* Y,
                           int ldy, cudaStream_t stream) {
    dim3 block(MLD_BX, MLD_BY);
    dim3 grid((cols + MLD_BX - 1) / MLD_BX, (rows + MLD_BY - 1) / MLD_BY);
    matrix_axpy_ld<<<grid, block, 0, stream>>>(rows, cols, alpha, X, ldx, Y, ldy);
}
