"""Loop unswitching (xlate/translate/triton/unswitch.py): a counted loop whose body branches on a per-thread test
no iteration changes -- a row's alignment, fma's row kernel in small -- becomes two versions under one test of the
program's threads: the vector path alone where every thread passes, both paths masked otherwise. Checked on the
Triton interpreter against NumPy with rows aligned (m % 4 == 0) and not (the other version), sizes off the block,
poisoned outputs; a test that changes between iterations or reads a carried variable keeps one loop; block
batching keeps the general version; the port compiles for sm_90 (Triton merges what both branches assign)."""

from __future__ import annotations

import ast
import re
import textwrap

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_lift_layout import _ptx
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.translate.triton.batchast import UNSWITCH, strip_skip_guards

ROWS = """
#include <cstdint>
// xlate: a: in[n * m], w: in[m], y: inout[n * m], idx: in[n](0..n - 1 distinct) as int32, n: size(1..300),
// xlate: m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void row_axpy(const float* a, const float* w, float* y, const int* idx, int n, int m) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int r = idx[t];
    int quads = m / 4;
    for (int q = 0; q < quads; ++q) {
        const float* src = &a[r * m + 4 * q];
        float* dst = &y[r * m + 4 * q];
        if (reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
            float4 v = *reinterpret_cast<const float4*>(src);
            float4 o = *reinterpret_cast<float4*>(dst);
            o.x += v.x * w[4 * q]; o.y += v.y * w[4 * q + 1]; o.z += v.z * w[4 * q + 2]; o.w += v.w * w[4 * q + 3];
            *reinterpret_cast<float4*>(dst) = o;
        } else {
            for (int j = 0; j < 4; ++j) dst[j] += src[j] * w[4 * q + j];
        }
    }
    for (int k = 4 * quads; k < m; ++k) y[r * m + k] += a[r * m + k] * w[k];
}

// xlate: a: in[n * m], y: inout[n * m], n: size(1..300), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void alternating(const float* a, float* y, int n, int m) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    for (int q = 0; q < m; ++q) {
        if ((t + q) % 2 == 0) y[t * m + q] += a[t * m + q];
        else y[t * m + q] -= a[t * m + q];
    }
}

// xlate: a: in[n * m], y: out[n * m], n: size(1..300), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void flips(const float* a, float* y, int n, int m) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int s = t % 3;
    for (int q = 0; q < m; ++q) {
        if (s == 0) y[t * m + q] = a[t * m + q];
        else y[t * m + q] = -a[t * m + q];
        s = 1 - s;
    }
}
"""


LAGGED = """
// xlate: x: inout[n * 64], n: size(2..20), grid: 1, block: 64
__global__ void lagged(unsigned int* x, int n) {
    __shared__ unsigned int w[64];
    w[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    for (int i = 1; i < n; i++) {
        unsigned int acc = 0;
        if (threadIdx.x < 8) {
            for (int k = 0; k < 8; k++) acc += x[(i - 1) * 64 + k] * w[7 + threadIdx.x - k];
            x[i * 64 + threadIdx.x] = acc;
        }
        __syncthreads();
    }
}
"""


def _row_axpy(text: str, tmp_path, n: int, m: int, seed: int) -> None:
    a = rng(seed).standard_normal(n * m).astype(np.float32)
    w = rng(seed + 1).standard_normal(m).astype(np.float32)
    y0 = rng(seed + 2).standard_normal(n * m).astype(np.float32)
    idx = rng(seed + 3).permutation(n).astype(np.int32)
    out = run(text, "row_axpy", [buf("a", a), buf("w", w), buf("y", y0.copy()), buf("idx", idx),
                                 ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    guards_intact(out, "y")
    want = y0.astype(np.float64).reshape(n, m) + a.astype(np.float64).reshape(n, m) * w.astype(np.float64)
    np.testing.assert_allclose(out["y"].reshape(n, m), want, rtol=1e-5, atol=1e-5)


def test_a_rows_alignment_test_splits_the_loop_into_a_vector_version_and_the_general_one(tmp_path):
    t = port(ROWS)
    assert set(t.kernels) == {"row_axpy", "alternating", "flips"}, [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "row_axpy")
    assert len(re.findall(rf"^    {UNSWITCH}\w* = tl\.max\(", body, re.M)) == 1, body
    fast, general = body.split(f"    if {UNSWITCH}", 1)[1].split("\n    else:\n", 1)
    fast_loop = fast.split("for q_it in", 1)[1]
    general_loop = general.split("for q_it in", 1)[1].split("\n    for ", 1)[0]
    # the version every thread's row is aligned for: 16-byte blocks of a and y, no element-by-element fallback
    assert len(re.findall(r"tl\.load\(tl\.expand_dims\(", fast_loop)) == 2, fast_loop  # a and y (w: scalars)
    assert not re.search(r"tl\.load\((a|y) \+", fast_loop), fast_loop
    assert re.search(r"tl\.load\((a|y) \+", general_loop), general_loop  # the general version keeps it
    # aligned rows (m % 4 == 0: every row starts on 16 bytes) take the first version, others the second
    for n, m, seed in ((300, 64, 1), (65, 8, 2), (130, 37, 3), (7, 6, 4), (64, 3, 5)):
        _row_axpy(t.text, tmp_path, n, m, seed)


def test_tests_that_change_between_iterations_or_read_a_carried_value_keep_one_loop(tmp_path):
    t = port(ROWS)
    for kernel in ("alternating", "flips"):
        assert UNSWITCH not in kernel_body(t.text, kernel), kernel
    n, m = 131, 9
    a = rng(6).standard_normal(n * m).astype(np.float32)
    y0 = rng(7).standard_normal(n * m).astype(np.float32)
    out = run(t.text, "alternating", [buf("a", a), buf("y", y0.copy()), ScalarArg("n", n, "int32"),
                                      ScalarArg("m", m, "int32")], tmp_path)
    sign = np.where((np.arange(n)[:, None] + np.arange(m)[None, :]) % 2 == 0, 1.0, -1.0)
    np.testing.assert_allclose(out["y"].reshape(n, m), y0.reshape(n, m) + sign * a.reshape(n, m), rtol=1e-6)
    out = run(t.text, "flips", [buf("a", a), buf("y", poisoned(n * m, np.float32)), ScalarArg("n", n, "int32"),
                                ScalarArg("m", m, "int32")], tmp_path)
    guards_intact(out, "y")
    s = np.arange(n) % 3
    want = np.empty((n, m))
    for q in range(m):
        want[:, q] = np.where(s == 0, 1.0, -1.0) * a.reshape(n, m)[:, q]
        s = 1 - s
    np.testing.assert_allclose(out["y"].reshape(n, m), want, rtol=1e-6)


def test_block_batching_keeps_the_general_version():
    fn = ast.parse(textwrap.dedent(f"""
        @triton.jit
        def _k(x, n, BX: tl.constexpr):
            {UNSWITCH} = tl.max(x) == 0
            if {UNSWITCH}:
                for i in range(0, n, 1):
                    fast(i)
            else:
                for i in range(0, n, 1):
                    general(i)
    """)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    out = ast.unparse(strip_skip_guards(fn))
    assert "general(i)" in out and "fast(i)" not in out and UNSWITCH not in out


def test_the_unswitched_port_compiles_for_sm90(tmp_path):
    t = port(ROWS)
    ptx = _ptx(t.text, "row_axpy", {"a": "*fp32", "w": "*fp32", "y": "*fp32", "idx": "*i32", "n": "i32", "m": "i32"},
               {"BX": 64}, tmp_path, num_warps=2)
    assert "ld.global.v4" in ptx  # the vector version's 16-byte loads



def test_a_test_of_the_thread_index_alone_keeps_one_loop_and_the_kernel_lifts(tmp_path):
    """`if (threadIdx.x < 8)` is the same in every program: no version would ever run for all threads, and taken as
    true it would unmask shared reads the other threads make out of bounds (lfib4's `lastEntGPU` stopped lifting
    so before the test was excluded). One loop, and the values of the masked reads."""
    t = port(LAGGED)
    assert t.kernels == ["lagged"], [d.format() for d in t.diagnostics]
    assert UNSWITCH not in kernel_body(t.text, "lagged")
    n = 6
    x0 = rng(8).integers(0, 1000, n * 64).astype(np.uint32)
    out = run(t.text, "lagged", [buf("x", x0.copy()), ScalarArg("n", n, "int32")], tmp_path)
    want = x0.astype(np.uint64).reshape(n, 64)
    w = want[0].copy()
    for i in range(1, n):
        for j in range(8):
            want[i, j] = sum(int(want[i - 1, k]) * int(w[7 + j - k]) for k in range(8)) % (1 << 32)
    np.testing.assert_array_equal(out["x"].reshape(n, 64).astype(np.uint64), want)
