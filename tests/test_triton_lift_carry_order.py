"""A shared tile that run-time loops update in place, where each loop reads only elements that the reading thread
wrote itself or that a barrier separates from their writer: an in-block LU factorisation (Doolittle, no pivoting)
whose inner loops run over constant ranges. The race check of carried shared arrays (carry.py) takes every value
of such a loop's variable for the read and for the write, and so proves no other thread wrote what is read; the
variant without the barrier between the column and the row updates is a race and stays refused. The port runs
under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, rng, run

LU = """
#define W 16
// xlate: a: inout[tiles * 256], tiles: size(1..40), grid: tiles, block: 16
__global__ void tile_lu(float* a, int tiles) {
    __shared__ float m[W * W];
    int c = threadIdx.x;
    int k, q;  // declared outside the loops, which then run as loops of the port
    float* tile = a + blockIdx.x * W * W;
    for (k = 0; k < W; k++) m[k * W + c] = tile[k * W + c];
    __syncthreads();
    for (k = 0; k < W - 1; k++) {
        if (c > k) {  // thread c finishes row c's entry of column k
            for (q = 0; q < k; q++) m[c * W + k] -= m[c * W + q] * m[q * W + k];
            m[c * W + k] /= m[k * W + k];
        }
        BARRIER
        if (c > k) {  // thread c updates column c's entry of row k + 1
            for (q = 0; q <= k; q++) m[(k + 1) * W + c] -= m[(k + 1) * W + q] * m[q * W + c];
        }
        __syncthreads();
    }
    for (k = 0; k < W; k++) tile[k * W + c] = m[k * W + c];
}
"""


def _doolittle(t: np.ndarray) -> np.ndarray:
    """L (unit diagonal, below) and U (on and above the diagonal) of t packed in one matrix."""
    n = len(t)
    lu = t.astype(np.float64).copy()
    for k in range(n):
        for i in range(k + 1, n):
            lu[i, k] /= lu[k, k]
            lu[i, k + 1:] -= lu[i, k] * lu[k, k + 1:]
    return lu


def test_lu_tile_reads_only_what_its_thread_or_a_barrier_ordered():
    t = port(LU.replace("BARRIER", "__syncthreads();"))
    assert t.kernels == ["tile_lu"], [d.format() for d in t.blocking]


def test_lu_tile_port_matches_numpy(tmp_path):
    t = port(LU.replace("BARRIER", "__syncthreads();"))
    tiles = 1
    mats = rng(15).uniform(-1, 1, (tiles, 16, 16)).astype(np.float32) + np.float32(16) * np.eye(16, dtype=np.float32)
    out = run(t.text, "tile_lu", [buf("a", mats.reshape(-1)), ScalarArg("tiles", tiles, "int32")], tmp_path)
    want = np.stack([_doolittle(m) for m in mats]).reshape(-1)
    np.testing.assert_allclose(out["a"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "a")


def test_lu_tile_without_the_middle_barrier_is_refused():
    t = port(LU.replace("BARRIER", ""))
    assert t.kernels == []
    assert [(d.kernel, d.code) for d in t.blocking] == [("tile_lu", "XL2009")], [d.format() for d in t.blocking]
