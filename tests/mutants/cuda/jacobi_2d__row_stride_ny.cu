// Wrong stride for non-square grids: the up/down neighbours are ny elements away instead of nx
// (the row length); identical to the source when ny == nx.
#include <cuda_runtime.h>

// xlate: u: in[ny, nx], u_new: out[ny, nx], ny: size(1..300), nx: size(1..300),
// xlate: grid: (cdiv(nx, 16), cdiv(ny, 16)), block: (16, 16), op: elementwise
__global__ void jacobi_5pt(const float* u, float* u_new, int ny, int nx) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ny || j >= nx) return;
    int idx = i * nx + j;
    if (i == 0 || j == 0 || i == ny - 1 || j == nx - 1) {
        u_new[idx] = u[idx];
    } else {
        u_new[idx] = 0.25f * (u[idx - ny] + u[idx + ny] + u[idx - 1] + u[idx + 1]);
    }
}
