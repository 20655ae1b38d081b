// Wrong: no __syncthreads() between writing the shared tile and reading it transposed; a thread
// reads tile cells that other warps of the block may not have written yet.
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
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
