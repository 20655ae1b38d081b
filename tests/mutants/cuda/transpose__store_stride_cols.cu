// Wrong stride for non-square shapes: odata (cols x rows) is addressed with row stride cols
// instead of rows; identical when rows == cols, writes past the end when rows < cols.
#include <cuda_runtime.h>

#define TILE 32
#define BLOCK_ROWS 8

// xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
__global__ void transpose_tiled(const float* idata, float* odata, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            odata[(y + j) * cols + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
