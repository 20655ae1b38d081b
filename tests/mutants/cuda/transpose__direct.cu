// Correct: no shared memory; each thread copies its four elements of the tile straight across
// (uncoalesced stores, same result).
#include <cuda_runtime.h>

#define TILE 32
#define BLOCK_ROWS 8

// xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
__global__ void transpose_tiled(const float* idata, float* odata, int rows, int cols) {
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        int y = blockIdx.y * TILE + threadIdx.y + j;
        if (x < cols && y < rows) odata[x * rows + y] = idata[y * cols + x];
    }
}
