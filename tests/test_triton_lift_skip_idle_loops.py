"""A loop under a condition some threads fail is skipped by a program none of whose threads passes it, as a CUDA
block whose threads all fail the `if` skips it (loops.skip_unless_some_thread_runs).

Without the test a lifted program ran every iteration with its effects masked off: epistasis, over the pairs
j > i of a grid twice the data's size, left three quarters of its programs idle and ran 7.1x slower than CUDA
(H100). Ports run under the Triton interpreter against NumPy, on grids with idle programs, partly idle blocks
(sizes not multiples of the block) and busy ones; outputs poisoned; every launch configuration of a batched port
(whose batched kernel runs the loop masked, without the test) gives the same values."""

from __future__ import annotations

import ast

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.verify.configs import declared, only

PAIRS = """
// xlate: bits: in[n * len], score: out[n * n], n: size(1..70), len: size(1..9), rows: size(1..140),
// xlate: grid: (cdiv(n, 32), rows), block: 32
__global__ void pair_overlap(const unsigned int* bits, float* score, int n, int len, int rows) {
    int j = blockIdx.x * 32 + threadIdx.x;
    int i = blockIdx.y;
    if (j > i && i < n && j < n) {
        unsigned int c = 0;
        for (int p = 0; p < len; p++)
            c += __popc(bits[i * len + p] & bits[j * len + p]);
        score[i * n + j] = (float)c + 0.5f;
    }
}

// xlate: x: in[n * m], y: out[n], n: size(1..300), m: size(1..6), pad: size(0..5), grid: cdiv(n, 32) + pad,
// xlate: block: 32
__global__ void guarded_columns(const float* x, float* y, int n, int m, int pad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int j = 0; j < m; j++) acc += x[j * n + i] * (j + 1);
        y[i] = acc;
    }
}

// xlate: x: in[n * 4], y: out[n], n: size(1..300), grid: cdiv(n, 32), block: 32
__global__ void fixed_count(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int j = 0; j < 4; j++) acc += x[j * n + i];
        y[i] = acc;
    }
}
"""

KERNELS = ["pair_overlap", "guarded_columns", "fixed_count"]


def guards(text: str, kernel: str) -> list[str]:
    return [ln.strip() for ln in kernel_body(text, kernel).splitlines() if ln.strip().startswith("if __xl_runs")]


def test_pairs_below_the_diagonal_skip_the_loop_and_the_scores_are_right(tmp_path):
    t = port(PAIRS)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "pair_overlap")
    assert len(guards(t.text, "pair_overlap")) == 1, body
    assert body.index("if __xl_runs") < body.index("for "), body  # the test comes before the loop
    for n, length, rows, seed in ((70, 9, 140, 1), (33, 3, 40, 2), (5, 1, 7, 3)):  # rows > n: idle programs
        bits = rng(seed).integers(0, 2**32, n * length, dtype=np.uint64).astype(np.uint32)
        out = run(t.text, "pair_overlap", [buf("bits", bits), buf("score", poisoned(n * n, np.float32)),
                                           ScalarArg("n", n, "int32"), ScalarArg("len", length, "int32"),
                                           ScalarArg("rows", rows, "int32")], tmp_path)
        want = np.full((n, n), np.nan)
        b = bits.reshape(n, length)
        for i in range(n):
            for j in range(i + 1, n):
                want[i, j] = sum(bin(int(v)).count("1") for v in (b[i] & b[j])) + 0.5
        np.testing.assert_array_equal(out["score"].reshape(n, n), want)
        guards_intact(out, "score")


def test_a_batched_port_runs_the_loop_masked_in_every_configuration(tmp_path):
    t = port(PAIRS)
    assert len(guards(t.text, "guarded_columns")) == 1
    table = declared(t.text)
    assert table is not None and len(table["guarded_columns"]) > 1  # the test does not stop block batching
    batched = next(n for n in ast.parse(t.text).body if isinstance(n, ast.FunctionDef)
                   and n.name == "_guarded_columns_kernel_blocks")
    assert "__xl_runs" not in ast.unparse(batched)  # dropped: R blocks per program run the loop masked
    for n, m, pad in ((1, 1, 5), (37, 3, 4), (203, 6, 0), (64, 2, 3)):
        x = rng(n * m).standard_normal(n * m).astype(np.float32)
        want = (x.reshape(m, n).astype(np.float64) * np.arange(1, m + 1)[:, None]).sum(axis=0)
        for index in range(len(table["guarded_columns"])):
            out = run(only(t.text, "guarded_columns", index), "guarded_columns",
                      [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                       ScalarArg("m", m, "int32"), ScalarArg("pad", pad, "int32")], tmp_path)
            np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
            guards_intact(out, "y")


def test_no_test_for_a_count_known_when_the_kernel_compiles():
    t = port(PAIRS)
    assert guards(t.text, "fixed_count") == []  # four iterations: cheaper than the block reduction of a test


TRIANGLE_2D = """
// xlate: x: in[n * m], y: out[n * n], n: size(1..60), m: size(1..7), grid: (cdiv(n, 8), cdiv(n, 4) + 3),
// xlate: block: (8, 4)
__global__ void upper_gram(const float* x, float* y, int n, int m) {
    int j = blockIdx.x * 8 + threadIdx.x;
    int i = blockIdx.y * 4 + threadIdx.y;
    if (i < n && j < n && j >= i) {
        float s = 0.0f;
        for (int k = 0; k < m; k++) s += x[i * m + k] * x[j * m + k];
        y[i * n + j] = s;
    }
}
"""


def test_a_two_dimensional_block_tests_all_its_threads(tmp_path):
    """The upper triangle of a Gram matrix with 8 x 4 blocks: programs below the diagonal and past the rows skip
    the loop, the blocks on the diagonal run it for their threads above it."""
    t = port(TRIANGLE_2D)
    assert t.kernels == ["upper_gram"], [d.format() for d in t.diagnostics]
    assert len(guards(t.text, "upper_gram")) == 1
    for n, m in ((37, 5), (8, 1), (60, 7)):
        x = rng(n + m).standard_normal(n * m).astype(np.float32)
        out = run(t.text, "upper_gram", [buf("x", x), buf("y", poisoned(n * n, np.float32)),
                                         ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
        xs = x.reshape(n, m).astype(np.float64)
        want = xs @ xs.T
        want[np.tril_indices(n, -1)] = np.nan  # never written
        np.testing.assert_allclose(out["y"].reshape(n, n), want, rtol=1e-5, atol=1e-5)
        guards_intact(out, "y")
