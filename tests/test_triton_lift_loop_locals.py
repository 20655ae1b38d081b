"""Names a loop body declares, used in the subscript of a shared-array store inside the loop: the store names a
different element every iteration, so the slot is no per-thread local for the loop's duration (privatize.py),
and a port must read the declared names inside the loop, never before it. Run under the Triton interpreter
against a NumPy reference of the CUDA semantics, with a size that is not a multiple of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

TILE_ROWS = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 32), block: 32
__global__ void tile_rows(const float* x, float* y, int n) {
    __shared__ float tile[6 * 8];  // 48 elements, filled by 32 threads
    int t = threadIdx.x;
    for (int k = t; k < 48; k += 32) {
        const int row = k / 8;
        const int col = k % 8;
        int g = blockIdx.x * 32 + row * 8 + col - 8;
        tile[row * 8 + col] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    __syncthreads();
    int i = blockIdx.x * 32 + t;
    if (i < n) y[i] = tile[t] + tile[t + 16];
}
"""


def test_slot_subscript_of_names_the_loop_declares(tmp_path):
    t = port(TILE_ROWS)
    assert t.kernels == ["tile_rows"], [d.format() for d in t.blocking]
    n = 77
    x = rng(11).standard_normal(n).astype(np.float32)
    out = run(t.text, "tile_rows", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    i = np.arange(n)

    def tile(e: np.ndarray) -> np.ndarray:  # element e of block i // 32's tile: x[32 b + e - 8], 0 outside x
        g = (i // 32) * 32 + e - 8
        return np.where((g >= 0) & (g < n), x[np.clip(g, 0, n - 1)], np.float32(0))

    np.testing.assert_array_equal(out["y"], tile(i % 32) + tile(i % 32 + 16))
    guards_intact(out, "y")
