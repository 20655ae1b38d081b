// Matrix transpose through a padded shared-memory tile (TILE x TILE+1 avoids bank conflicts).
// in is [rows, cols] row-major, out is [cols, rows]. 32x8 threads move a 32x32 tile.
#include <cuda_runtime.h>

#define TILE 32
#define BLOCK_ROWS 8

// xlate: in: in[rows, cols], out: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
__global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;  // column in `in`
    int y = blockIdx.y * TILE + threadIdx.y;  // row in `in`
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // column in `out` (= row in `in`)
    y = blockIdx.x * TILE + threadIdx.y;  // row in `out` (= column in `in`)
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

void launch_transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    dim3 block(TILE, BLOCK_ROWS);
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tiled<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
