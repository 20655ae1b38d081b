"""A strided loop whose start the thread index gives but no affine map of it (a warp's thread rank: `for (i =
threadIdx.x % 32; i < C; i += 32)`, one warp a row) is a `for` range with each thread at its own offset, not a
masked `while` whose every iteration reduces the block's active mask. A start that may be negative, or that data
gives, is a loop over each thread's trip count (test_triton_lift_counted_loops.py), not a masked loop either. Ports run under the Triton interpreter against NumPy float64, rows and columns not
multiples of the warp or block, the outputs poisoned."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body as body
from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: x: in[N * C], out: out[N * C], mean: out[N], N: size(1..40), C: size(1..300), grid: cdiv(N, 4), block: 128
__global__ void centre_rows(const float* x, float* out, float* mean, int N, int C) {
    int row = blockIdx.x * 4 + threadIdx.x / 32;
    if (row >= N) return;
    float s = 0.0f;
    for (int i = threadIdx.x % 32; i < C; i += 32) s += x[row * C + i];
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
    float m = s / C;
    if (threadIdx.x % 32 == 0) mean[row] = m;
    for (int i = threadIdx.x % 32; i < C; i += 32) out[row * C + i] = x[row * C + i] - m;
}

// xlate: x: in[n], y: out[n], n: size(1..3000), grid: 1, block: 64
__global__ void shifted_start(const float* x, float* y, int n) {
    for (int i = (int)(threadIdx.x % 8) - 3; i < n; i += 8)
        if (i >= 0) y[i] = 2.0f * x[i];
}

// xlate: x: in[n], k: in[64](0..7), y: out[n], n: size(1..3000), grid: 1, block: 64
__global__ void data_start(const float* x, const int* k, float* y, int n) {
    for (int i = threadIdx.x * 8 + k[threadIdx.x]; i < n; i += 512) y[i] = x[i] + 1.0f;
}
"""



def test_a_warp_rank_start_is_a_range(tmp_path):
    t = port(SRC)
    assert t.kernels == ["centre_rows", "shifted_start", "data_start"], [d.format() for d in t.diagnostics]
    b = body(t.text, "centre_rows")
    # the first loop only loads and sums (unrolled as nvcc would: unroll.py), the second stores
    assert "while" not in b and b.count("in tl.range(0, C, 32, loop_unroll_factor=4, num_stages=_xl_stages)") == 1, b
    assert b.count("in range(0, C, 32)") == 1, b
    for kernel in ("shifted_start", "data_start"):  # a start that may be negative, or that data gives: counted
        assert "while" not in body(t.text, kernel) and re.search(r"_trip_it in (tl\.)?range\(", body(t.text, kernel))

    for n, c in ((37, 300), (5, 33), (1, 1), (8, 31)):
        x = rng(n * c).standard_normal(n * c).astype(np.float32)
        out = run(t.text, "centre_rows", [buf("x", x), buf("out", poisoned(n * c, np.float32)),
                                          buf("mean", poisoned(n, np.float32)), ScalarArg("N", n, "int32"),
                                          ScalarArg("C", c, "int32")], tmp_path)
        rows = x.astype(np.float64).reshape(n, c)
        np.testing.assert_allclose(out["mean"], rows.mean(axis=1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out["out"], (rows - rows.mean(axis=1, keepdims=True)).reshape(-1), rtol=1e-5,
                                   atol=1e-5)
        guards_intact(out, "out")
        guards_intact(out, "mean")

    n = 1001
    x = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "shifted_start", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_array_equal(out["y"], 2.0 * x)
    k = rng(8).integers(0, 8, 64).astype(np.int32)
    y = run(t.text, "data_start", [buf("x", x), buf("k", k), buf("y", poisoned(n, np.float32)),
                                   ScalarArg("n", n, "int32")], tmp_path)["y"]
    written = np.zeros(n, bool)
    for tt in range(64):
        written[np.arange(tt * 8 + k[tt], n, 512)] = True
    np.testing.assert_array_equal(y[written], x[written] + 1.0)
    assert np.isnan(y[~written]).all()
