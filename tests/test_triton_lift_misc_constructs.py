"""Constructs the CUDA -> Triton lifter used to refuse for reasons of parsing or naming rather than semantics: a
loop bound `i < n >> 3` that tree-sitter reads as a template, a template type's buffer reinterpreted as another
scalar type, assignments to another file's macros of memory elements, GNU statement expressions of a max macro,
pointer differences and comparisons, a file-scope dynamic shared array, a template argument written as an
expression; and the refusals kept where a lift would be unsound (an overload the template type decides, a
variable template). Each case is a small kernel written here, run on the Triton interpreter against NumPy or
Python integers, with sizes that are no multiple of the block and outputs poisoned before the run."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

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


# -- a macro of another file that names an element of memory, assigned to ---------------------------------------

SLOTS_H = """
#pragma once
#define lo   slots[0]
#define hi   slots[1]
#define last (*(y + n - 1))
"""

SLOTS_CU = """
// included by main.cu after slots.h: the macros are the program's, not this file's
__global__ void two_slots(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float slots[2];
    lo = x[i];
    hi = 2.0f * x[i];
    lo += hi;
    hi *= lo;
    if (i < n - 1) y[i] = lo - hi;
    else last = -1.0f;
}
"""

SLOTS_MAIN = """
#include "slots.h"
#include "slots.cu"

int main() {
    int n = 1000;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    two_slots<<<(n + 127) / 128, 128>>>(x, y, n);
    return 0;
}
"""


def test_assignments_to_macros_of_another_file_store_to_what_they_name(tmp_path):
    d = tmp_path / "prog"
    d.mkdir()
    for name, text in (("slots.h", SLOTS_H), ("slots.cu", SLOTS_CU), ("main.cu", SLOTS_MAIN)):
        (d / name).write_text(text)
    unit = parse_file(d / "slots.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["two_slots"], [d.format() for d in t.diagnostics]
    n = 1000
    x = rng(8).standard_normal(n).astype(np.float32)
    out = run(t.text, "two_slots", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    a = x + np.float32(2) * x
    want = a - (np.float32(2) * x) * a
    want[n - 1] = -1.0
    np.testing.assert_allclose(out["y"], want, rtol=1e-6)
    guards_intact(out, "y")


# -- GNU statement expressions: `({ __typeof__ (a) _a = (a); ...; _a > _b ? _a : _b; })` ---------------------------

STATEMENT_EXPRESSION = """
#define big(a, b) ({ __typeof__ (a) _a = (a); __typeof__ (b) _b = (b); _a > _b ? _a : _b; })
#define clamp_low(v, lo) ({ int _v = (v); int _l = (lo) + _v / 4; _v < _l ? _l : _v; })
// xlate: x: in[n], y: out[n], k: out[n], n: size(1..4000), grid: cdiv(n, 128), block: 128
__global__ void peaks(const float* x, float* y, int* k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = big(x[i], 0.25f * x[(i + 1) % n]);
    m = big(m, x[(i + n - 1) % n] - 1.0f);
    y[i] = m;
    k[i] = clamp_low(i - 500, 3.9f);
}
"""


def test_a_statement_expression_of_copies_is_its_last_expression(tmp_path):
    t = ported(STATEMENT_EXPRESSION, "peaks")
    n = 999
    x = rng(9).standard_normal(n).astype(np.float32)
    out = run(t.text, "peaks", [buf("x", x), buf("y", poisoned(n, np.float32)), buf("k", poisoned(n, np.int32)),
                                ScalarArg("n", n, "int32")], tmp_path)
    m = np.maximum(x, np.float32(0.25) * np.roll(x, -1))
    np.testing.assert_array_equal(out["y"], np.maximum(m, np.roll(x, 1) - np.float32(1)))
    want = []
    for i in range(n):
        v = i - 500
        lo = int(3.9 + float(int(v / 4)))  # `int _l = (lo) + _v / 4`: C's truncating division, then to int
        want.append(lo if v < lo else v)
    assert out["k"].tolist() == want
    guards_intact(out, "y")
    guards_intact(out, "k")


# -- pointers into one buffer: differences, comparisons, `*p++` ------------------------------------------------

POINTER_WALK = """
// xlate: x: in[n], sums: out[m], lens: out[m], n: size(1..4000), m: size(1..200), grid: cdiv(m, 32), block: 32
__global__ void chunk_sums(const int* x, int* sums, long long* lens, int n, int m) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    int per = n / m;
    const int* start = x + per * t;
    const int* end = (t == m - 1) ? x + n : start + per;
    lens[t] = end - start;
    const int* p = start;
    int s = 0;
    for (int k = 0; k < 40; k++) {
        if (p < end) s += (k + 1) * *p++;
    }
    sums[t] = s + (p == end) * 100000;
}
"""


def test_pointers_into_one_buffer_subtract_compare_and_step(tmp_path):
    t = ported(POINTER_WALK, "chunk_sums")
    n, m = 1003, 26  # 25 chunks of 38 (walked to their end), the last of 53 (not)
    x = rng(10).integers(-100, 100, n).astype(np.int32)
    out = run(t.text, "chunk_sums", [buf("x", x), buf("sums", poisoned(m, np.int32)),
                                     buf("lens", poisoned(m, np.int64)), ScalarArg("n", n, "int32"),
                                     ScalarArg("m", m, "int32")], tmp_path)
    per = n // m
    want_s, want_l = [], []
    for c in range(m):
        lo, hi = per * c, (n if c == m - 1 else per * c + per)
        part = x[lo:hi].tolist()[:40]
        want_s.append(sum((k + 1) * v for k, v in enumerate(part)) + (100000 if hi - lo <= 40 else 0))
        want_l.append(hi - lo)
    assert out["sums"].tolist() == want_s
    assert out["lens"].tolist() == want_l
    guards_intact(out, "sums")
    guards_intact(out, "lens")


# -- a dynamic shared array declared at file scope, and a template argument written as an expression -------------

FILE_SHARED = """
typedef int item;
extern __shared__ item scratch[];
#define THREADS 128

template <unsigned int width>
__device__ item spread(item v) {
    return v * (item)width - (item)(width % 5);
}

// xlate: x: in[n], sums: out[cdiv(n, 128)], n: size(1..5000), grid: cdiv(n, 128), block: 128, shmem: 128 * 4
__global__ void block_totals(const item* x, item* sums, int n) {
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * THREADS + tid;
    scratch[tid] = i < n ? spread<THREADS / 2 + 3>(x[i]) : 0;
    __syncthreads();
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] += scratch[tid + s];
        __syncthreads();
    }
    if (tid == 0) sums[blockIdx.x] = scratch[0];
}
"""


def test_a_file_scope_shared_array_and_an_expression_as_template_argument(tmp_path):
    t = ported(FILE_SHARED, "block_totals")
    n = 1001
    blocks = (n + 127) // 128
    x = rng(12).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "block_totals", [buf("x", x), buf("sums", poisoned(blocks, np.int32)),
                                       ScalarArg("n", n, "int32")], tmp_path)
    padded = np.concatenate([67 * x - 2, np.zeros(blocks * 128 - n, np.int32)])  # width 67
    assert out["sums"].tolist() == padded.reshape(blocks, 128).sum(axis=1).tolist()
    guards_intact(out, "sums")


# -- an overload picked by the kernel's template type: refused, the port being generic in it -----------------------

GENERIC_PICK = """
template <class T> __device__ int total(T v) { return 0; }
template <> __device__ int total(int v) { return v; }
template <> __device__ int total(int2 v) { return v.x + v.y; }
// xlate: x: in[n], y: out[n], n: size(1..500), T: int32, grid: cdiv(n, 64), block: 64
template <class T>
__global__ void totals(const T* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = total(x[i]);
}
"""


def test_an_overload_the_template_type_decides_is_refused():
    t = port(GENERIC_PICK)
    assert t.kernels == []
    why = [d.message for d in t.diagnostics if d.kernel == "totals"]
    assert any("overload of 'total'" in m and "template type" in m for m in why), why


VARIABLE_TEMPLATE = """
template <typename T> constexpr T sentinel = T(-1);
// xlate: x: in[n], y: out[n], n: size(1..500), grid: cdiv(n, 64), block: 64
__global__ void mark(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] == sentinel<int>;
}
"""


def test_a_variable_template_is_refused_by_name():
    t = port(VARIABLE_TEMPLATE)
    assert t.kernels == []
    assert any("variable template 'sentinel<int>'" in d.message for d in t.diagnostics), \
        [d.message for d in t.diagnostics]
