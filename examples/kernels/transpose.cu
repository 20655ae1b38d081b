// Matrix transpose through a padded shared-memory tile (TILE x TILE+1 avoids bank conflicts).
// idata is [rows, cols] row-major, odata is [cols, rows]. 32x8 threads move a 32x32 tile.
#include <cuda_runtime.h>

#define TILE 32
#define BLOCK_ROWS 8

// xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
__global__ void transpose_tiled(const float* idata, float* odata, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;  // column in idata
    int y = blockIdx.y * TILE + threadIdx.y;  // row in idata
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // column in odata (= row in idata)
    y = blockIdx.x * TILE + threadIdx.y;  // row in odata (= column in idata)
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

void launch_transpose_tiled(const float* idata, float* odata, int rows, int cols, cudaStream_t stream) {
    dim3 block(TILE, BLOCK_ROWS);
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tiled<<<grid, block, 0, stream>>>(idata, odata, rows, cols);
}
