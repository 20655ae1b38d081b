"""A counted loop over a variable declared before it, under a thread-dependent condition, with a step of run-time
value (`int p; ... if (i < n) { for (p = 0; p < rows * m; p += m) ... }`): a `for` range over the uniform start,
bound and step (its effects masked by the condition, the variable merged after it with its exit value), not a
masked `while` whose every iteration reduces the block's active mask (two barriers an iteration on a GPU).
Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: x: in[rows * m], y: out[m], rows: size(1..20), m: size(1..500), grid: cdiv(m, 96), block: 96
__global__ void column_sums(const int* x, int* y, int rows, int m) {
    int p, col;
    int acc = 0;
    col = blockIdx.x * blockDim.x + threadIdx.x;
    p = col < 40 ? -7 : -8;
    if (col < m && (col % 5) != 2) {
        for (p = 0; p < rows * m - m; p += m) acc += x[p + col] * (p / m + 1);
        acc += 1000 * x[p + col];
    }
    if (col < m) y[col] = acc + p;
}
"""


def kernel_body(text: str, kernel: str) -> str:
    return text.split(f"def _{kernel}_kernel(", 1)[1].split("\ndef ", 1)[0]


def test_run_time_step_loop_under_a_thread_condition_is_a_range(tmp_path):
    t = port(SRC)
    assert t.kernels == ["column_sums"], [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "column_sums")
    assert "while" not in body and "in tl.range(" in body, body
    for rows, m in ((7, 300), (1, 45), (3, 1)):
        x = rng(rows * m).integers(-20, 20, rows * m).astype(np.int32)
        out = run(t.text, "column_sums", [buf("x", x), buf("y", poisoned(m, np.int32)), ScalarArg("rows", rows, "int32"),
                                          ScalarArg("m", m, "int32")], tmp_path)
        xs = x.reshape(rows, m).astype(np.int64)
        col = np.arange(m)
        weights = np.arange(1, rows)[:, None]
        inside = (xs[: rows - 1] * weights).sum(axis=0) + 1000 * xs[rows - 1] + (rows - 1) * m
        want = np.where(col % 5 != 2, inside, np.where(col < 40, -7, -8))
        assert np.array_equal(out["y"], want.astype(np.int32))
        guards_intact(out, "y")
