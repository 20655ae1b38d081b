"""Patterns of real CUDA code (HeCBench-like, written here in our own words) that the CUDA -> Triton lifter
ports: preprocessor conditionals and pragmas in kernel bodies, signed literals, cooperative-groups namespace
aliases, std::numeric_limits and UINT32_C, typedef'd and template scalar types, double scalars, template value
parameters, reference parameters and references to elements, multi-dimensional local arrays.

Every port runs under the Triton interpreter (xlate's Triton backend, a worker subprocess with
TRITON_INTERPRET=1) on fresh random inputs whose sizes are not multiples of the block, with poisoned outputs
and guard bands, against an independent NumPy float64 reference. What cannot be ported faithfully must stay
'not translated' with a diagnostic naming the construct."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

GUARD = 5


def port(src: str, path: str = "k.cu"):
    unit = parse_string(src, path, "cuda")
    return CudaToTriton().translate(unit, src, TranslateOptions())


def ported(src: str, *kernels: str):
    t = port(src)
    assert t.kernels == list(kernels), [d.format() for d in t.diagnostics]
    return t


def run(text: str, kernel: str, args: list, tmp_path: Path) -> dict[str, np.ndarray]:
    b = get_backend("triton")
    f = tmp_path / f"{kernel}_triton.py"
    f.write_text(text)
    art = b.compile(text, kernel, CompileOptions(), path=str(f))
    res = b.run(art, args, LaunchConfig())
    assert res.status == "ok", res.message + res.stderr
    return {k: v[GUARD:-GUARD] for k, v in res.buffers.items()} | {f"{k}@guards": np.concatenate([v[:GUARD], v[-GUARD:]])
                                                                    for k, v in res.buffers.items()}


def buf(name: str, data: np.ndarray) -> BufferArg:
    """`data` between guard bands of a sentinel (checked untouched after the run)."""
    poison = np.full(GUARD, 77, dtype=data.dtype)
    return BufferArg(name, np.concatenate([poison, data, poison]), GUARD, len(data))


def poisoned(n: int, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    return np.full(n, np.nan if dt.kind == "f" else 99, dtype=dt)


def guards_intact(out: dict[str, np.ndarray], name: str) -> None:
    assert (out[f"{name}@guards"] == 77).all(), f"{name}: write outside the buffer"


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- preprocessor lines in kernel bodies ---------------------------------------------------------------------

CONDITIONALS = """
#define USE_FAST 1
#define VARIANT 3
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void cond_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int j = 1; j <= 3; j++) acc += x[i] * j;
#ifdef USE_FAST
    acc = acc * 2.0f;
#else
    acc = acc * 100.0f;
#endif
#ifndef NOT_DEFINED_ANYWHERE
    acc = acc + 0.5f;
#endif
#if VARIANT == 2
    acc = -acc;
#elif VARIANT >= 3 && defined(USE_FAST)
    acc = acc - 4.0f;
#else
    acc = acc * 0.0f;
#endif
#if __CUDA_ARCH__ >= 700
    acc = acc * 3.0f;
#endif
    y[i] = acc;
}
"""


def test_preprocessor_conditionals_and_pragmas_take_the_device_branch(tmp_path):
    t = ported(CONDITIONALS, "cond_kernel")
    n = 77
    x = rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "cond_kernel", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    ref = ((x.astype(np.float64) * 6.0 * 2.0 + 0.5) - 4.0) * 3.0
    np.testing.assert_allclose(out["y"], ref, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_undecidable_conditional_stays_refused():
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if SOME_FUNC(3)
    if (i < n) y[i] = x[i];
#endif
}
"""
    t = port(src)
    assert t.kernels == [] and t.blocking and "#if SOME_FUNC(3)" in t.blocking[0].message


# -- literals, casts and names of the C++ library ------------------------------------------------------------

LITERALS = """
#include <cstdint>
#include <limits>
namespace cgx = cooperative_groups;
// xlate: x: in[n], y: out[n], m: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void literals(const int* x, int* y, unsigned int* m, int n) {
    namespace cg = cooperative_groups;
    cg::thread_block block = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    if (i < n) {
        int v = x[i];
        int lim = std::numeric_limits<short>::max();
        int r = v > lim ? -1 : (v < std::numeric_limits<short>::lowest() ? -2 : v - -3);
        y[i] = r;
        m[i] = (unsigned int)v ^ UINT32_C(0x80000001);
    }
}
"""


def test_signed_literals_numeric_limits_and_int_literal_macros(tmp_path):
    t = ported(LITERALS, "literals")
    n = 301
    x = rng(2).integers(-70000, 70000, n).astype(np.int32)
    out = run(t.text, "literals", [buf("x", x), buf("y", poisoned(n, np.int32)), buf("m", poisoned(n, np.uint32)),
                                   ScalarArg("n", n, "int32")], tmp_path)
    xi = x.astype(np.int64)
    ref = np.where(xi > 32767, -1, np.where(xi < -32768, -2, xi + 3))
    assert (out["y"] == ref).all()
    assert (out["m"] == ((xi % 2**32) ^ 0x80000001)).all()
    guards_intact(out, "y")
    guards_intact(out, "m")


# -- scalar types ----------------------------------------------------------------------------------------------

SCALARS = """
typedef double real;
using index_t = int;
template <typename T>
__global__ void fill_offset(T* a, T v, index_t n) {
    index_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v + (T)i;
}
// xlate: x: in[n], y: out[n], s: scalar, n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void scale_double(const real* x, real* y, real s, index_t n) {
    index_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = s * x[i] + 1e-300;
}
"""


def test_double_and_typedef_scalars_keep_their_precision(tmp_path):
    t = ported(SCALARS, "fill_offset", "scale_double")
    n = 99
    x = rng(3).standard_normal(n)
    s = 1.0 + 2.0**-40  # not representable in float32: a float32 pass would lose it
    out = run(t.text, "scale_double", [buf("x", x), buf("y", poisoned(n, np.float64)), ScalarArg("s", s, "float64"),
                                       ScalarArg("n", n, "int32")], tmp_path)
    ref = s * x + 1e-300
    np.testing.assert_array_equal(out["y"], ref)
    guards_intact(out, "y")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_template_scalar_takes_the_launch_type(dtype, tmp_path):
    t = ported(SCALARS, "fill_offset", "scale_double")
    n = 70
    v = 1234567.125 if np.dtype(dtype).kind == "f" else -5
    out = run(t.text, "fill_offset", [buf("a", poisoned(n, dtype)), ScalarArg("v", v, np.dtype(dtype).name),
                                      ScalarArg("n", n, "int32")], tmp_path)
    ref = (np.asarray(v, dtype) + np.arange(n).astype(dtype)).astype(dtype)
    np.testing.assert_array_equal(out["a"], ref)
    guards_intact(out, "a")


TEMPLATE_VALUE = """
template <int TILE, int SCALE>
__global__ void tiled_scale(const float* x, float* y, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) y[i] = x[i] * SCALE + TILE;
}
void launch(const float* x, float* y, int n) {
    tiled_scale<128, 3><<<(n + 127) / 128, 128>>>(x, y, n);
}
"""


def test_template_value_parameters_take_the_launch_values(tmp_path):
    t = ported(TEMPLATE_VALUE, "tiled_scale")
    n = 300
    x = rng(4).standard_normal(n).astype(np.float32)
    out = run(t.text, "tiled_scale", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["y"], x.astype(np.float64) * 3 + 128, rtol=1e-6)
    guards_intact(out, "y")
