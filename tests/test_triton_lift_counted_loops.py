"""Loops whose start or bound differs by thread and which the body leaves alone (loops.py `counted_loop`): each
thread's trip count is computed once at entry and the block runs `range(most trips)`, each thread masked past its
own count, instead of a masked `while` whose exit test reduces over the block every iteration. A row per thread over
CSR offsets, a column loop unrolled by four (`col + 3 * blockDim.x < D`, an unsigned test) whose exit value starts
the remainder loop, an inclusive bound; left a masked loop where the body writes what the bound reads. Ports run under
the Triton interpreter against NumPy in float64, sizes off the block."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: rowptr: in[rows + 1](0..nnz ascending), cols: in[nnz](0..m - 1), vals: in[nnz], x: in[m], y: out[rows], rows: size(1..700), nnz: size(1..3000), m: size(1..300), grid: cdiv(rows, 64), block: 64
__global__ void csr_rows(const int* rowptr, const int* cols, const float* vals, const float* x, float* y,
                         int rows, int nnz, int m) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int j = rowptr[r]; j < rowptr[r + 1]; j++)
            acc += vals[j] * x[cols[j]];
        y[r] = acc;
    }
}

// xlate: data: in[rows * D], limit: in[rows], hits: out[rows * 128], rows: size(1..6), D: size(1..2000), grid: rows, block: 128
__global__ void count_above(const float* data, const float* limit, int* hits, int rows, int D) {
    const float* row = data + blockIdx.x * D;
    const float lim = limit[blockIdx.x];
    int n = 0;
    int col = threadIdx.x;
    for (; col + 3 * blockDim.x < D; col += 4 * blockDim.x) {
        n += (row[col] > lim) + (row[col + blockDim.x] > lim);
        n += (row[col + 2 * blockDim.x] > lim) + (row[col + 3 * blockDim.x] > lim);
    }
    for (; col < D; col += blockDim.x)
        n += row[col] > lim;
    hits[blockIdx.x * blockDim.x + threadIdx.x] = n * 10000 + col;
}

// xlate: lo: in[n](0..40), hi: in[n](0..40), out: out[n], n: size(1..1000), grid: cdiv(n, 32), block: 32
__global__ void inclusive_span(const int* lo, const int* hi, long long* out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    long long s = 0;
    for (int k = lo[t]; k <= hi[t]; k += 3) s += (long long)k * k;
    out[t] = s;
}

// xlate: len: inout[n](0..9), acc: out[n], n: size(1..1000), grid: cdiv(n, 32), block: 32
__global__ void shrinking_bound(int* len, int* acc, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int s = 0;
    for (int i = 0; i < len[t]; i++) {
        s += i;
        len[t] = len[t] - 1;
    }
    acc[t] = s;
}

// xlate: len: inout[n](0..9), acc: out[n], n: size(1..1000), grid: cdiv(n, 32), block: 32
__global__ void shrinking_through_a_pointer(int* len, int* acc, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int* mine = len + t;
    int s = 0;
    for (int i = 0; i < len[t]; i++) {
        s += i;
        *mine -= 1;
    }
    acc[t] = s;
}

// xlate: offsets: in[n](0..200), lengths: in[n](0..9), src: in[220], dst: out[220], n: size(1..500), grid: cdiv(n, 64), block: 64
__global__ void runs_from_offsets(const long* offsets, const int* lengths, const float* src, float* dst, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    long start = offsets[t];
    long end = start + lengths[t];  // read once: the stores below cannot move it
    for (long i = start; i < end; i++) dst[i] = 3.0f * src[i] + (float)t;
}
"""

KERNELS = ["csr_rows", "count_above", "inclusive_span", "shrinking_bound", "shrinking_through_a_pointer",
           "runs_from_offsets"]


def masked_loops(text: str, kernel: str) -> int:
    return len(re.findall(r"while tl\.max\(", kernel_body(text, kernel)))


def test_per_thread_bounds_become_counted_ranges(tmp_path):
    t = port(SRC)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    for k in ("csr_rows", "count_above", "inclusive_span", "runs_from_offsets"):
        assert masked_loops(t.text, k) == 0 and "for " in kernel_body(t.text, k), kernel_body(t.text, k)
    # the body shortens the bound it reads (by name, or through another pointer): the test is evaluated every
    # iteration, as in CUDA
    assert masked_loops(t.text, "shrinking_bound") == 1
    assert masked_loops(t.text, "shrinking_through_a_pointer") == 1

    g = rng(1)
    rows, m = 300, 77
    counts = g.integers(0, 12, rows)
    counts[5] = 0  # an empty row
    rowptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(rowptr[-1])
    cols = g.integers(0, m, nnz).astype(np.int32)
    vals = g.standard_normal(nnz).astype(np.float32)
    x = g.standard_normal(m).astype(np.float32)
    out = run(t.text, "csr_rows", [buf("rowptr", rowptr), buf("cols", cols), buf("vals", vals), buf("x", x),
                                   buf("y", poisoned(rows, np.float32)), ScalarArg("rows", rows, "int32"),
                                   ScalarArg("nnz", nnz, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    want = np.array([sum(float(vals[j]) * float(x[cols[j]]) for j in range(rowptr[r], rowptr[r + 1]))
                     for r in range(rows)])
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def count_above_reference(data: np.ndarray, limit: np.ndarray, rows: int, d: int) -> np.ndarray:
    out = np.zeros(rows * 128, np.int64)
    for b in range(rows):
        for tid in range(128):
            col, n = tid, 0
            while col + 3 * 128 < d:
                n += sum(int(data[b * d + col + k * 128] > limit[b]) for k in range(4))
                col += 512
            while col < d:
                n += int(data[b * d + col] > limit[b])
                col += 128
            out[b * 128 + tid] = n * 10000 + col
    return out


def test_an_unrolled_column_loop_leaves_its_exit_value_to_the_remainder_loop(tmp_path):
    t = port(SRC)
    for rows, d, seed in ((3, 1001, 2), (2, 383, 3), (1, 384, 4), (4, 5, 5), (2, 1537, 6)):
        data = rng(seed).standard_normal(rows * d).astype(np.float32)
        limit = rng(seed + 10).standard_normal(rows).astype(np.float32)
        out = run(t.text, "count_above", [buf("data", data), buf("limit", limit),
                                          buf("hits", poisoned(rows * 128, np.int32)),
                                          ScalarArg("rows", rows, "int32"), ScalarArg("D", d, "int32")], tmp_path)
        assert out["hits"].tolist() == count_above_reference(data, limit, rows, d).tolist(), (rows, d)
        guards_intact(out, "hits")


def test_an_inclusive_bound_and_a_bound_the_body_changes(tmp_path):
    t = port(SRC)
    n = 333
    lo = rng(7).integers(0, 41, n).astype(np.int32)
    hi = rng(8).integers(0, 41, n).astype(np.int32)
    out = run(t.text, "inclusive_span", [buf("lo", lo), buf("hi", hi), buf("out", poisoned(n, np.int64)),
                                         ScalarArg("n", n, "int32")], tmp_path)
    want = [sum(k * k for k in range(a, b + 1, 3)) for a, b in zip(lo.tolist(), hi.tolist())]
    assert out["out"].tolist() == want
    guards_intact(out, "out")

    length = rng(9).integers(0, 10, n).astype(np.int32)
    for k in ("shrinking_bound", "shrinking_through_a_pointer"):
        out = run(t.text, k, [buf("len", length.copy()), buf("acc", poisoned(n, np.int32)),
                              ScalarArg("n", n, "int32")], tmp_path)
        # i counts up while len counts down: the loop stops where they meet
        trips = (length + 1) // 2
        assert out["acc"].tolist() == (trips * (trips - 1) // 2).tolist(), k
        assert out["len"].tolist() == (length - trips).tolist(), k


def test_a_bound_held_in_a_local_is_counted_though_the_body_stores(tmp_path):
    t = port(SRC)
    n = 300
    # threads in random order claim disjoint runs (no two write one element), some empty
    order = np.argsort(rng(10).random(n))
    lens = rng(11).integers(0, 10, n)
    offsets, lengths = np.zeros(n, np.int64), np.zeros(n, np.int32)
    at = 0
    for tt in order:
        lengths[tt] = min(int(lens[tt]), 200 - at)
        offsets[tt] = at
        at += int(lengths[tt])
    src = rng(14).standard_normal(220).astype(np.float32)
    out = run(t.text, "runs_from_offsets", [buf("offsets", offsets), buf("lengths", lengths), buf("src", src),
                                            buf("dst", poisoned(220, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = np.full(220, np.nan)
    for tt in range(n):
        for i in range(offsets[tt], offsets[tt] + lengths[tt]):
            want[i] = 3.0 * float(src[i]) + tt
    np.testing.assert_allclose(out["dst"], want, rtol=1e-6, atol=1e-6)
    guards_intact(out, "dst")
