"""A halo tile in a block of several rows, its halo written at a subscript that splits the thread index
(`tz + (tz / R) * T`: the low side for tz < R, the high side otherwise), so no affine map inverts it. Each thread
then reads one other thread's stored value (a token of one thread); the threads that read the same write at the
same (dx, dy, dz) shift fill a box of the block, and each box is the stored value recomputed at the shifted
threads. Ports run under the Triton interpreter against NumPy, on sizes that are not multiples of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

HALO = """
#define R 2
#define T 4
__device__ float at(const float* u, int i, int j, int k, int nx, int ny, int nz) {
    if (i < 0 || i >= nx || j >= ny || k < 0 || k >= nz) return 0.0f;
    return u[(k * ny + j) * nx + i];
}

// xlate: u: in[nx * ny * nz], out: out[nx * ny * nz], nx: size(1..40), ny: size(1..40), nz: size(1..40),
// xlate: grid: (cdiv(nx, 4), cdiv(ny, 4), cdiv(nz, 4)), block: (4, 4, 4)
__global__ void halo_cross(const float* u, float* out, int nx, int ny, int nz) {
    __shared__ float s[T + 2 * R][T][T + 2 * R];
    int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    int i = blockIdx.x * T + tx, j = blockIdx.y * T + ty, k = blockIdx.z * T + tz;
    s[tz + R][ty][tx + R] = at(u, i, j, k, nx, ny, nz);
    int zs = tz / R;  // the side of the tile this thread's z halo element lies on
    s[tz + zs * T][ty][tx + R] = at(u, i, j, k + (zs * 2 - 1) * R, nx, ny, nz);
    int xs = tx / R;
    s[tz + R][ty][tx + xs * T] = at(u, i + (xs * 2 - 1) * R, j, k, nx, ny, nz);
    __syncthreads();
    if (i < nx && j < ny && k < nz) {
        float acc = 3.0f * s[tz + R][ty][tx + R];
        for (int d = 1; d <= R; d++)
            acc += d * (s[tz + R + d][ty][tx + R] - s[tz + R - d][ty][tx + R])
                 + (s[tz + R][ty][tx + R + d] + s[tz + R][ty][tx + R - d]) / d;
        out[(k * ny + j) * nx + i] = acc;
    }
}
"""


def _halo_cross(u: np.ndarray) -> np.ndarray:
    """The stencil on u[k, j, i], zero outside the grid."""
    nz, ny, nx = u.shape
    p = np.zeros((nz + 4, ny, nx + 4))
    p[2:-2, :, 2:-2] = u
    c = p[2:-2, :, 2:-2]
    out = 3.0 * c
    for d in (1, 2):
        out += d * (p[2 + d : 2 + d + nz, :, 2:-2] - p[2 - d : 2 - d + nz, :, 2:-2])
        out += (p[2:-2, :, 2 + d : 2 + d + nx] + p[2:-2, :, 2 - d : 2 - d + nx]) / d
    return out


def test_a_halo_split_by_the_thread_index_in_a_3d_block_is_gathered(tmp_path):
    t = port(HALO)
    assert t.kernels == ["halo_cross"], [d.format() for d in t.diagnostics]
    for nx, ny, nz in ((7, 5, 6), (1, 3, 9), (10, 1, 2)):
        u = rng(nx * ny * nz).standard_normal((nz, ny, nx)).astype(np.float32)
        n = u.size
        out = run(t.text, "halo_cross",
                  [buf("u", u.ravel()), buf("out", poisoned(n, np.float32)), ScalarArg("nx", nx, "int32"),
                   ScalarArg("ny", ny, "int32"), ScalarArg("nz", nz, "int32")], tmp_path)
        np.testing.assert_allclose(out["out"], _halo_cross(u.astype(np.float64)).ravel(), rtol=1e-5, atol=1e-5)
        guards_intact(out, "out")
