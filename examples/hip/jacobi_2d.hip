// HIP port of kernels/jacobi_2d.cu (same algorithm; the device code needs no warp-size changes).
// One Jacobi sweep of the 5-point Laplace stencil on an [ny, nx] row-major grid:
// interior points become the mean of their 4 neighbours, boundary points are copied unchanged.
#include <hip/hip_runtime.h>

#define JB_X 16
#define JB_Y 16

// xlate: u: in[ny, nx], u_new: out[ny, nx], ny: size(1..300), nx: size(1..300),
// xlate: grid: (cdiv(nx, 16), cdiv(ny, 16)), block: (16, 16), op: elementwise
__global__ void jacobi_5pt(const float* u, float* u_new, int ny, int nx) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // column
    int i = blockIdx.y * blockDim.y + threadIdx.y;  // row
    if (i >= ny || j >= nx) return;
    int idx = i * nx + j;
    if (i == 0 || j == 0 || i == ny - 1 || j == nx - 1) {
        u_new[idx] = u[idx];
    } else {
        u_new[idx] = 0.25f * (u[idx - nx] + u[idx + nx] + u[idx - 1] + u[idx + 1]);
    }
}

void launch_jacobi_5pt(const float* u, float* u_new, int ny, int nx, hipStream_t stream) {
    dim3 block(JB_X, JB_Y);
    dim3 grid((nx + JB_X - 1) / JB_X, (ny + JB_Y - 1) / JB_Y);
    jacobi_5pt<<<grid, block, 0, stream>>>(u, u_new, ny, nx);
}
