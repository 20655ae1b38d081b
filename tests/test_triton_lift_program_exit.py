"""A Triton program none of whose threads is left ends before a loop, as its CUDA block does.

CUDA threads past the work (`if (i >= n) return;`) leave their block, and a block whose threads all left costs
nothing; a lifted program instead ran every iteration of the loop that follows with its effects masked off (crs's
dotprod, a grid of 15,360 blocks with 60 at work, ran 30x slower than CUDA). The lifter now ends such a program
with `if tl.max(alive) == 0: return` before a top-level loop, and block batching keeps that test over all the
blocks of a program. Ports run under the Triton interpreter against NumPy float64, on grids far larger than the
work, sizes not multiples of the block, outputs poisoned; every configuration (one block per program, and R
blocks per program) gives the same values."""

from __future__ import annotations

import ast

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.translate.triton.batching import batch_kernel
from xlate.verify.configs import declared, only

COLUMN_SUMS = """
// xlate: x: in[n * m], y: out[n], n: size(1..300), m: size(1..6), pad: size(0..9), grid: cdiv(n, 32) + pad,
// xlate: block: 32
__global__ void column_sums(const float* x, float* y, int n, int m, int pad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < m; j++) acc += x[j * n + i] * (j + 1);
    y[i] = acc;
}
"""

UNIFORM = """
// xlate: x: in[rows * 32], y: out[rows], rows: size(1..40), m: size(1..5), extra: size(0..7),
// xlate: grid: rows + extra, block: 32
__global__ void row_sums(const float* x, float* y, int rows, int m, int extra) {
    if (blockIdx.x >= rows) return;
    __shared__ float part[32];
    float acc = 0.0f;
    for (int r = 0; r < m; r++) acc += x[blockIdx.x * 32 + threadIdx.x] + r;
    part[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int t = 0; t < 32; t++) s += part[t];
        y[blockIdx.x] = s;
    }
}
"""

NO_RETURN = """
// xlate: x: in[n * m], y: out[n], n: size(1..300), m: size(1..6), grid: cdiv(n, 32), block: 32
__global__ void no_return(const float* x, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int j = 0; j < m; j++) if (i < n) acc += x[j * n + i];
    if (i < n) y[i] = acc;
}
"""


def exits(text: str) -> list[str]:
    """The kernels' program exits (the launchers' own early returns are not kernel code)."""
    return [ast.unparse(s) for s in ast.walk(ast.parse(text)) if isinstance(s, ast.If) and len(s.body) == 1
            and isinstance(s.body[0], ast.Return) and "tl.max" in ast.unparse(s.test)]


def test_a_program_whose_threads_all_returned_ends_before_the_loop(tmp_path):
    t = port(COLUMN_SUMS)
    assert t.kernels == ["column_sums"], [d.format() for d in t.diagnostics]
    fn = next(n for n in ast.parse(t.text).body if isinstance(n, ast.FunctionDef) and n.name == "_column_sums_kernel")
    order = [type(s).__name__ for s in fn.body]
    assert "If" in order and order.index("If") < order.index("For"), order  # the test comes before the loop
    table = declared(t.text)
    assert table is not None and len(table["column_sums"]) > 1  # the exit test does not stop block batching
    for n, m, pad in ((1, 1, 9), (37, 3, 4), (203, 6, 0), (64, 2, 7)):  # 37, 203: not multiples of 32
        x = rng(n * m).standard_normal(n * m).astype(np.float32)
        want = (x.reshape(m, n).astype(np.float64) * np.arange(1, m + 1)[:, None]).sum(axis=0)
        for index in range(len(table["column_sums"])):  # each configuration on its own, as the gate runs them
            out = run(only(t.text, "column_sums", index), "column_sums",
                      [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                       ScalarArg("m", m, "int32"), ScalarArg("pad", pad, "int32")], tmp_path)
            np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
            guards_intact(out, "y")


def test_a_block_that_returned_as_a_whole_ends_too(tmp_path):
    t = port(UNIFORM)
    assert t.kernels == ["row_sums"], [d.format() for d in t.diagnostics]
    assert exits(t.text), t.text
    for rows, m, extra in ((1, 1, 7), (13, 5, 3), (40, 2, 0)):
        x = rng(rows).standard_normal(rows * 32).astype(np.float32)
        out = run(t.text, "row_sums", [buf("x", x), buf("y", poisoned(rows, np.float32)),
                                       ScalarArg("rows", rows, "int32"), ScalarArg("m", m, "int32"),
                                       ScalarArg("extra", extra, "int32")], tmp_path)
        want = (x.reshape(rows, 32).astype(np.float64)[:, :, None] + np.arange(m)).sum(axis=(1, 2))
        np.testing.assert_allclose(out["y"], want, rtol=1e-4, atol=1e-4)
        guards_intact(out, "y")


def test_no_exit_test_where_no_thread_returns():
    t = port(NO_RETURN)
    assert t.kernels == ["no_return"], [d.format() for d in t.diagnostics]
    assert exits(t.text) == []


EXIT_THEN_LOOP = """
@triton.jit
def _k(x, y, n, m, BX: tl.constexpr):
    pid_x = tl.program_id(0)
    lane_x = tl.arange(0, BX)
    i = (pid_x * 32) + lane_x
    if tl.max(((i < n)).to(tl.int32)) == 0:
        return
    acc = tl.full([BX], 0.0, tl.float32)
    for j in range(0, m, 1):
        acc = acc + tl.load(x + (j * n + i), mask=i < n, other=0)
    tl.store(y + i, acc, mask=i < n)
"""


def test_batching_keeps_the_exit_test_over_every_block_of_the_program():
    fn = ast.parse(EXIT_THEN_LOOP).body[0]
    src, why = batch_kernel(fn, "_k_blocks")
    assert src is not None, why
    test = next(s for s in ast.parse(src).body[0].body if isinstance(s, ast.If))
    assert ast.unparse(test.test) == "tl.max((i < n).to(tl.int32)) == 0"  # no axis: all R blocks, not one


def test_other_block_dependent_branches_still_stop_batching():
    for test in ("tl.max((i < n).to(tl.int32), axis=0) == 0", "tl.max((i < n).to(tl.int32)) == 1",
                 "pid_x > n"):
        fn = ast.parse(EXIT_THEN_LOOP.replace("tl.max(((i < n)).to(tl.int32)) == 0", test)).body[0]
        src, why = batch_kernel(fn, "_k_blocks")
        assert src is None and why, test


TWO_LOOPS = """
// xlate: x: in[n * m], y: out[n], z: out[n], n: size(1..300), m: size(1..6), k: size(0..300),
// xlate: grid: cdiv(n, 32) + 2, block: 32
__global__ void two_loops(const float* x, float* y, float* z, int n, int m, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = 0.0f, b = 0.0f;
    for (int j = 0; j < m; j++) a += x[j * n + i];
    for (int j = 0; j < m; j++) b = fmaxf(b, x[j * n + i]);
    y[i] = a;
    if (i >= k) return;
    for (int j = 0; j < m; j++) b += x[j * n + i];
    z[i] = b;
}
"""


def test_one_exit_test_per_set_of_returned_threads(tmp_path):
    t = port(TWO_LOOPS)
    assert t.kernels == ["two_loops"], [d.format() for d in t.diagnostics]
    fn = next(n for n in ast.parse(t.text).body if isinstance(n, ast.FunctionDef) and n.name == "_two_loops_kernel")
    assert len(exits(ast.unparse(fn))) == 2  # before the first loop, and after the second return; not between
    for n, m, k in ((37, 3, 20), (203, 6, 300), (5, 1, 0)):
        x = rng(n * m).standard_normal(n * m).astype(np.float32)
        out = run(t.text, "two_loops", [buf("x", x), buf("y", poisoned(n, np.float32)), buf("z", poisoned(n, np.float32)),
                                        ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32"),
                                        ScalarArg("k", k, "int32")], tmp_path)
        x2 = x.reshape(m, n).astype(np.float64)
        np.testing.assert_allclose(out["y"], x2.sum(axis=0), rtol=1e-5, atol=1e-5)
        zwant = np.maximum(x2.max(axis=0), 0.0) + x2.sum(axis=0)
        live = np.arange(n) < k
        np.testing.assert_allclose(out["z"][live], zwant[live], rtol=1e-5, atol=1e-5)
        assert np.isnan(out["z"][~live]).all()  # threads that returned never write
        guards_intact(out, "y")
        guards_intact(out, "z")
