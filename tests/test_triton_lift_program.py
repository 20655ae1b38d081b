"""The CUDA -> Triton lifter reads a kernel in its program, as real code is written: macros and constants that an
includer or a header defines (`#define BLOCK 64` in main.cu before `#include "kernels.cu"`), file-scope constants
computed from them (`const Real dx = LEN / N;` with `#define Real double`), function-like macros and device
functions of other headers (also namespace-qualified), while-loop tree reductions whose trip count is known, and
`assert` as Triton's device assertion. Each port runs under the Triton interpreter against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, poisoned, rng
from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

COMMON_H = """
#pragma once
#define Real double
#define LEN 2.0
#define NCELLS 64
#define IDX(r, c) ((r) * ncols + (c))
enum { HALO = 1, WIDTH_PAD = HALO + 1 };
"""

MATH_H = """
#pragma once
__device__ inline float sq(float v) { return v * v; }
namespace util {
__host__ __device__ inline int halve(int v) { return v >> 1; }
}
"""

KERNELS_CU = """
// this file is included by main.cu after the macros it uses are defined
__global__ void scale_grid(const Real* u, Real* v, int nrows, int ncols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < ncols && r < nrows) v[IDX(r, c)] = u[IDX(r, c)] / (dx * dx) + WIDTH_PAD;
}

__global__ void squares(const float* x, float* y, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    assert(n > 0 && BLOCK == blockDim.x);
    if (i < n) y[i] = sq(x[i]) + util::halve(i);
}

__global__ void block_sums(const float* x, float* out, int n) {
    __shared__ float cache[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    cache[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    int s = BLOCK >> 1;
    while (s != 0) {
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
        s >>= 1;
    }
    if (threadIdx.x == 0) out[blockIdx.x] = cache[0];
}
"""

MAIN_CU = """
#include <cassert>
#include "common.h"
#include "math.h"
#define BLOCK 128
const Real dx = LEN / NCELLS;
#include "kernels.cu"

int main() {
    int nrows = 9, ncols = 300, n = 1000;
    Real *u, *v;
    float *x, *y, *out;
    cudaMalloc(&u, nrows * ncols * sizeof(Real));
    cudaMalloc(&v, nrows * ncols * sizeof(Real));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&out, ((n + BLOCK - 1) / BLOCK) * sizeof(float));
    dim3 grid((ncols + BLOCK - 1) / BLOCK, nrows);
    scale_grid<<<grid, BLOCK>>>(u, v, nrows, ncols);
    squares<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, y, n);
    block_sums<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, out, n);
    return 0;
}
"""


def program(tmp_path: Path) -> Path:
    d = tmp_path / "prog"
    d.mkdir()
    for name, text in (("common.h", COMMON_H), ("math.h", MATH_H), ("kernels.cu", KERNELS_CU), ("main.cu", MAIN_CU)):
        (d / name).write_text(text)
    return d / "kernels.cu"


def lifted(path: Path):
    unit = parse_file(path)
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["scale_grid", "squares", "block_sums"], [d.format() for d in t.diagnostics]
    return t


def run(text: str, kernel: str, args: list, tmp_path: Path) -> dict[str, np.ndarray]:
    return {k: v[GUARD:-GUARD] for k, v in run_raw(text, kernel, args, tmp_path).items()}


def test_names_of_the_program_are_read_where_the_kernel_uses_them(tmp_path):
    t = lifted(program(tmp_path))
    nrows, ncols = 5, 300
    u = rng(1).standard_normal(nrows * ncols)
    out = run(t.text, "scale_grid", [buf("u", u), buf("v", poisoned(nrows * ncols, np.float64)),
                                     ScalarArg("nrows", nrows, "int32"), ScalarArg("ncols", ncols, "int32")], tmp_path)
    dx = 2.0 / 64  # a double: Real is double, LEN a double literal
    np.testing.assert_allclose(out["v"], u / (dx * dx) + 2, rtol=1e-15)


def test_device_functions_of_other_headers_are_inlined(tmp_path):
    t = lifted(program(tmp_path))
    assert "tl.device_assert(" in t.text
    n = 1000
    x = rng(2).standard_normal(n).astype(np.float32)
    out = run(t.text, "squares", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["y"], x * x + (np.arange(n) >> 1), rtol=1e-6)


def test_while_tree_reduction_with_a_known_count_is_a_block_sum(tmp_path):
    t = lifted(program(tmp_path))
    assert "tl.sum(" in t.text and "while " not in t.text.split("def _block_sums_kernel")[1].split("\ndef ")[0]
    n = 1000
    x = rng(3).standard_normal(n).astype(np.float32)
    blocks = (n + 127) // 128
    out = run(t.text, "block_sums", [buf("x", x), buf("out", poisoned(blocks, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = np.add.reduceat(x.astype(np.float64), np.arange(0, n, 128))
    np.testing.assert_allclose(out["out"], want, rtol=1e-5, atol=1e-5)


EXTRA_H = """
#pragma once
template <typename K> __device__ inline void order(K &a, K &b) { if (b < a) { K t = a; a = b; b = t; } }
template <typename K> __device__ inline void order(K &a, K &b, K &c) { order(a, b); order(b, c); order(a, b); }
"""

EXTRA_CU = """
#include "extra.h"
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void sort3(const float* x, float* y, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 3;
    if (i + 2 >= n) return;
    float a = x[i], b = x[i + 1], c = x[i + 2];
    order(a, b, c);
    y[i] = a; y[i + 1] = b; y[i + 2] = c;
}

// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void early_exit_stage(const float* x, float* y, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i >= n) return;  // the threads past the end leave; the barrier waits for the others
    s[threadIdx.x] = __uint_as_float(__float_as_uint(x[i]) ^ 0x80000000u);  // negated through its bits
    __syncthreads();
    int j = threadIdx.x ^ 1;
    y[i] = blockIdx.x * 64 + j < n ? s[j] : 0.0f;
}

template <typename T>
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void halve_t(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / T(2);
}
"""


def test_overloads_exits_before_barriers_bit_casts_and_template_casts(tmp_path):
    d = tmp_path / "prog2"
    d.mkdir()
    (d / "extra.h").write_text(EXTRA_H)
    (d / "extra.cu").write_text(EXTRA_CU)
    unit = parse_file(d / "extra.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["sort3", "early_exit_stage", "halve_t"], [x.format() for x in t.diagnostics]
    n = 300
    x = rng(4).standard_normal(n).astype(np.float32)
    out = run(t.text, "sort3", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    assert np.array_equal(out["y"], np.sort(x.reshape(-1, 3), axis=1).reshape(-1))
    n = 157
    x = rng(5).standard_normal(n).astype(np.float32)
    out = run(t.text, "early_exit_stage", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    j = np.arange(n) ^ 1
    want = np.where(j < n, -x[np.minimum(j, n - 1)], 0.0).astype(np.float32)
    assert np.array_equal(out["y"], want)
    x = rng(6).standard_normal(n)
    out = run(t.text, "halve_t", [buf("x", x), buf("y", poisoned(n, np.float64)), ScalarArg("n", n, "int32")], tmp_path)
    assert np.array_equal(out["y"], x / 2)


def test_device_function_qualified_by_a_macro_of_a_sibling_header(tmp_path):
    # `HD` is defined in config.h, which the includer reads first; poly.h uses it without including it. Read
    # alone, poly.h has no device function, and the call was refused as unknown.
    d = tmp_path / "prog2"
    d.mkdir()
    (d / "config.h").write_text("#pragma once\n#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n")
    (d / "poly.h").write_text("#pragma once\nHD\nstatic inline float cubic(float v)\n{\n  return (v * v - 2.0f) * v;\n}\n")
    (d / "kernels.h").write_text("""
__global__ void eval_cubic(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = cubic(x[i]);
}
""")
    (d / "main.cu").write_text("""
#include "config.h"
#include "poly.h"
#include "kernels.h"
int main() {
    int n = 1000;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    eval_cubic<<<(n + 255) / 256, 256>>>(x, y, n);
    return 0;
}
""")
    unit = parse_file(d / "kernels.h")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["eval_cubic"], [g.format() for g in t.diagnostics]
    n = 1000
    x = rng(4).standard_normal(n).astype(np.float32)
    out = run(t.text, "eval_cubic", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["y"], (x * x - np.float32(2)) * x, rtol=1e-6)
