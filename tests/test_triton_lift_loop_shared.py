"""Shared arrays and run-time loops (loops.py, comm.py): a table filled before a loop and only passed to a device
function inside it stays visible there; a shared array the loop itself updates across its iterations is carried
from one iteration to the next as block tensors, where every cross-thread exchange is ordered by barriers; a racy
variant of each is still refused.

Each kernel is written here; its port runs on the Triton interpreter against a NumPy model of the CUDA program
on sizes that are not multiples of the block, outputs poisoned and buffers between guard bands."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

# -- a table passed to a device function that only reads it --------------------------------------------------

TABLE_LOOKUP = """
// xlate: table: in[16], x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__device__ float nearest_entry(float* tab, float v) {
    int k = (int)(v * 4.0f);
    k = k < 0 ? 0 : (k > 15 ? 15 : k);
    return tab[k];
}

__global__ void remap(const float* table, const float* x, float* y, int n) {
    __shared__ float tab[16];
    for (int j = threadIdx.x; j < 16; j += blockDim.x) tab[j] = table[j];
    __syncthreads();
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += gridDim.x * 64) {
        y[i] = nearest_entry(tab, x[i]) + 1.0f;
    }
}
"""


def test_table_passed_to_a_reading_device_function_inside_a_loop(tmp_path):
    t = ported(TABLE_LOOKUP, "remap")
    n = 333
    table = rng(1).standard_normal(16).astype(np.float32)
    x = rng(2).uniform(-1.0, 5.0, n).astype(np.float32)
    out = run(t.text, "remap", [buf("table", table), buf("x", x), buf("y", poisoned(n, np.float32)),
                                ScalarArg("n", n, "int32")], tmp_path)
    k = np.clip((x * np.float32(4.0)).astype(np.int64), 0, 15)
    np.testing.assert_allclose(out["y"], table[k] + np.float32(1.0), rtol=1e-6)
    guards_intact(out, "y")


def test_table_a_device_function_writes_inside_the_loop_is_refused():
    # the callee writes the table it is given: each thread's element changes in every iteration while other
    # threads read it without a barrier (a race), so the loop's reads cannot see the table as filled before it
    src = TABLE_LOOKUP.replace("    return tab[k];", "    tab[threadIdx.x % 16] = v;\n    return tab[k];")
    t = port(src)
    assert t.kernels == [] and t.blocking, t.text
