"""A `return` inside a run-time loop (a search that stops at its first hit, a kernel that leaves early from its
grid-stride loop, a return two loops deep) lifts as an exit flag, breaks and a return after the loop
(returns.py); a `static_assert` in a body is a compile-time check and is dropped. Ports run under the Triton
interpreter against NumPy references, sizes not a multiple of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
__device__ int first_above(const float* row, int len, float limit) {
    for (int k = 0; k < len; k++) {
        if (row[k] > limit) return k;
    }
    return -1;
}

// xlate: m: in[n * w], w: size(1..40), lens: in[n](0..w), out: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void search_rows(const float* m, int w, const int* lens, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = first_above(m + i * w, lens[i], 0.5f);
}

__device__ float pair_sum(const int* a, int len, int target) {
    int i = 0;
    while (i < len) {
        for (int j = i + 1; j < len; j++) {
            if (a[i] + a[j] == target) return 0.5f * (float)(i * 100 + j);
        }
        i++;
    }
    return -2.0f;
}

// xlate: a: in[n * 12](0..20), t: in[n](0..40), out: out[n], n: size(1..3000), grid: cdiv(n, 32), block: 32
__global__ void first_pair(const int* a, const int* t, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = pair_sum(a + i * 12, 12, t[i]);
}

// xlate: x: in[n], y: inout[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void mark_maxima(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int j = 0; j < n; j++) { if (x[j] > x[i]) return; }
    y[i] = 1.0f;
}

// xlate: x: in[n], y: out[n], n: size(1..3000), stop: scalar(-3..3), grid: 3, block: 64
__global__ void until_negative(const float* x, float* y, int n, float stop) {
    static_assert(sizeof(float) == 4, "floats are 32 bits");
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (x[i] < stop) return;
        y[i] = 2.0f * x[i];
    }
}
"""


def _first_above(m: np.ndarray, lens: np.ndarray, limit: float) -> np.ndarray:
    out = np.full(len(lens), -1, np.int32)
    for r, ln in enumerate(lens):
        hits = np.nonzero(m[r, :ln] > limit)[0]
        if len(hits):
            out[r] = hits[0]
    return out


def _first_pair(a: np.ndarray, t: np.ndarray) -> np.ndarray:
    out = np.full(len(t), -2.0, np.float64)
    for r in range(len(t)):
        found = [(i, j) for i in range(12) for j in range(i + 1, 12) if a[r, i] + a[r, j] == t[r]]
        if found:
            i, j = found[0]
            out[r] = 0.5 * (i * 100 + j)
    return out


def test_returns_inside_run_time_loops(tmp_path):
    t = port(SRC)
    assert t.kernels == ["search_rows", "first_pair", "mark_maxima", "until_negative"], [d.format() for d in t.diagnostics]
    n, w = 1000, 37
    m = rng(1).random((n, w)).astype(np.float32) * 0.6
    lens = rng(2).integers(0, w + 1, n).astype(np.int32)
    out = run(t.text, "search_rows", [buf("m", m.ravel()), ScalarArg("w", w, "int32"), buf("lens", lens),
                                      buf("out", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    assert np.array_equal(out["out"], _first_above(m.astype(np.float64), lens, 0.5))
    guards_intact(out, "out")

    n = 777
    a = rng(3).integers(0, 21, (n, 12)).astype(np.int32)
    tt = rng(4).integers(0, 41, n).astype(np.int32)
    out = run(t.text, "first_pair", [buf("a", a.ravel()), buf("t", tt), buf("out", poisoned(n, np.float32)),
                                     ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["out"], _first_pair(a, tt))
    guards_intact(out, "out")

    n = 333
    x = rng(6).integers(0, 40, n).astype(np.float32)  # ties: every copy of the maximum is marked
    y0 = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "mark_maxima", [buf("x", x), buf("y", y0), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["y"], np.where(x == x.max(), np.float32(1), y0))
    guards_intact(out, "y")

    n = 2000
    x = rng(5).standard_normal(n).astype(np.float32)
    out = run(t.text, "until_negative", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                         ScalarArg("stop", -1.5, "float32")], tmp_path)
    want = np.full(n, np.nan)
    stride = 3 * 64
    for tid in range(stride):  # each thread walks its stride until its first value below the stop
        for i in range(tid, n, stride):
            if x[i] < -1.5:
                break
            want[i] = 2.0 * np.float64(x[i])
    np.testing.assert_array_equal(out["y"], want.astype(np.float32))
    guards_intact(out, "y")
