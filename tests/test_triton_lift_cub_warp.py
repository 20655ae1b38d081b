"""CUB warp reductions (`cub::WarpReduce<T[, N]>(temp[w]).Sum(v)`, `.Reduce(v, cub::Max())`, `.Sum(v, valid)`)
lift to reductions over each aligned group of N threads, under a condition every thread of a group shares (a
warp's row past the end returns as a whole); a condition that splits a group is refused. Ports run under the
Triton interpreter against NumPy, with sizes that are not multiples of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
#include <cub/cub.cuh>
// xlate: x: in[rows * cols], out: out[rows], rows: size(1..300), cols: size(1..200),
// xlate: grid: cdiv(rows, 4), block: 128
__global__ void row_max_plus_sum(const float* x, float* out, int rows, int cols) {
    using WarpReduce = cub::WarpReduce<float>;
    __shared__ typename WarpReduce::TempStorage temp[4];
    int warp = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;  // the warp's row: all its threads return, or none
    float m = -1e30f, s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        m = fmaxf(m, x[row * cols + c]);
        s += x[row * cols + c];
    }
    m = WarpReduce(temp[warp]).Reduce(m, cub::Max());
    s = WarpReduce(temp[warp]).Sum(s);
    if (lane == 0) out[row] = m + s;
}

// xlate: x: in[n], out: out[cdiv(n, 8)], n: size(1..4000), grid: cdiv(n, 64), block: 64
__global__ void octet_count(const int* x, int* out, int n) {
    typedef cub::WarpReduce<int, 8> Octet;
    __shared__ typename Octet::TempStorage temp[8];
    int i = blockIdx.x * 64 + threadIdx.x;
    int first = (i / 8) * 8;
    int valid = min(8, n - first);  // the last octet: only its lanes inside x count
    int v = i < n ? x[i] : 12345;
    int total = Octet(temp[threadIdx.x / 8]).Sum(v, valid);
    if (i % 8 == 0 && i < n) out[i / 8] = total;
}
"""

SPLIT = """
#include <cub/cub.cuh>
// xlate: x: in[n], out: out[n], n: size(1..4000), grid: cdiv(n, 64), block: 64
__global__ void split_warp(const float* x, float* out, int n) {
    typedef cub::WarpReduce<float> R;
    __shared__ typename R::TempStorage temp[2];
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) out[i] = R(temp[threadIdx.x / 32]).Sum(x[i]);  // the warp holding n is cut in two
}
"""


def test_warp_reduce_per_row_and_per_octet(tmp_path):
    t = port(SRC)
    assert t.kernels == ["row_max_plus_sum", "octet_count"], [d.format() for d in t.blocking]
    rows, cols = 13, 45
    x = rng(13).standard_normal(rows * cols).astype(np.float32)
    out = run(t.text, "row_max_plus_sum", [buf("x", x), buf("out", poisoned(rows, np.float32)),
                                           ScalarArg("rows", rows, "int32"), ScalarArg("cols", cols, "int32")], tmp_path)
    xr = x.reshape(rows, cols)
    np.testing.assert_allclose(out["out"], xr.max(axis=1) + xr.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    guards_intact(out, "out")

    n = 1003
    xi = rng(14).integers(-100, 100, n).astype(np.int32)
    m = -(-n // 8)
    out = run(t.text, "octet_count", [buf("x", xi), buf("out", poisoned(m, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    pad = np.zeros(m * 8, dtype=np.int64)
    pad[:n] = xi
    np.testing.assert_array_equal(out["out"], pad.reshape(m, 8).sum(axis=1))
    guards_intact(out, "out")


def test_warp_reduce_under_a_condition_that_splits_a_warp_is_refused():
    t = port(SPLIT)
    assert t.kernels == []
    assert [(d.kernel, d.code) for d in t.blocking] == [("split_warp", "XL2015")], [d.format() for d in t.blocking]
