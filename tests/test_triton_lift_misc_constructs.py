"""Constructs the CUDA -> Triton lifter used to refuse for reasons of parsing or naming rather than semantics: a
loop bound `i < n >> 3` that tree-sitter reads as a template, a template type's buffer reinterpreted as another
scalar type. Each case is a small kernel written here, run on the Triton interpreter against NumPy or Python
integers, with sizes that are no multiple of the block and outputs poisoned before the run."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

# -- `i < n >> k`: a shift, not a template ------------------------------------------------------------------------

SHIFT_BOUND = """
// xlate: x: in[n], y: out[n], n: size(1..4000), m: scalar(0..200), grid: cdiv(n, 64), block: 64
__global__ void partial_sums(const int* x, int* y, int n, unsigned int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s = 0;
    for (int k = 0; k < m >> 2; k++) s += x[(i + k) % n];
    for (int k = 0; k < m + 3 >> 1 >> 1; k++) s += 10 * x[(i + 2 * k) % n];
    y[i] = s + (i < m >> 3) * 1000;
}
"""


def test_a_comparison_with_a_shift_is_no_template(tmp_path):
    t = ported(SHIFT_BOUND, "partial_sums")
    n, m = 1001, 45
    x = rng(3).integers(-50, 50, n).astype(np.int32)
    out = run(t.text, "partial_sums", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32"),
                                        ScalarArg("m", m, "uint32")], tmp_path)
    xs = x.tolist()
    want = []
    for i in range(n):
        s = sum(xs[(i + k) % n] for k in range(m >> 2))
        s += sum(10 * xs[(i + 2 * k) % n] for k in range(((m + 3) >> 1) >> 1))
        want.append(s + (1000 if i < (m >> 3) else 0))
    assert out["y"].tolist() == want
    guards_intact(out, "y")


# -- a template type's buffer read as another scalar type ---------------------------------------------------------

TEMPLATE_BITS = """
// xlate: x: in[n], y: out[n], n: size(1..4000), T: float32, grid: cdiv(n, 128), block: 128
template <typename T>
__global__ void float_bits(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int* bits = (const unsigned int*)x;   // T's bits, seen as words
    float* out = (float*)y + i;
    unsigned int w = bits[i] ^ 0x80000000u;               // the sign flipped
    *out = __uint_as_float(w) * 2.0f;
}
"""


def test_a_template_buffer_reinterpreted_as_another_scalar(tmp_path):
    t = ported(TEMPLATE_BITS, "float_bits")
    n = 777
    x = rng(5).standard_normal(n).astype(np.float32)
    out = run(t.text, "float_bits", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_array_equal(out["y"], -2.0 * x)
    guards_intact(out, "y")


WIDE_VIEW = """
// xlate: x: in[n], y: out[n], n: size(1..4000), T: float16, grid: cdiv(n, 128), block: 128
template <typename T>
__global__ void pair_words(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 >= n) return;
    const unsigned int* w = (const unsigned int*)(x + 2 * i);   // two T's of 2 bytes as one word
    unsigned int* o = (unsigned int*)y;
    o[i] = (w[0] >> 16) | (w[0] << 16);                          // the pair swapped
}
"""


def test_a_template_buffer_read_in_wider_words(tmp_path):
    t = ported(WIDE_VIEW, "pair_words")
    n = 1001
    x = rng(6).standard_normal(n).astype(np.float16)
    out = run(t.text, "pair_words", [buf("x", x), buf("y", poisoned(n, np.float16)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = poisoned(n, np.float16)
    want[0:n - 1:2], want[1:n:2] = x[1:n:2], x[0:n - 1:2]
    np.testing.assert_array_equal(out["y"].view(np.uint16), want.view(np.uint16))
    guards_intact(out, "y")
