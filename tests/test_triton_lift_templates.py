"""Device-function templates with value parameters (`template <int K> f(x)` called as `f<2>(x)` or `f<K>(x)`
from another template) and explicit specializations (`template <> float f<2>(float x)`), chosen by the call's
template arguments as C++ chooses them. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
template <int K> __device__ float poly(float x);
template <> __device__ float poly<1>(float x) { return 1.0f + x; }
template <> __device__ float poly<2>(float x) { return 1.0f + x + 0.5f * x * x; }
template <int K> __device__ float scaled(float x) { return K * poly<K>(x); }
template <int N, typename T> __device__ T times(T v) { return v * N; }

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void series(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = scaled<1>(x[i]) + scaled<2>(x[i]) + times<3, float>(x[i]);
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void unspecialized(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = scaled<3>(x[i]);   // poly<3> is declared, never defined
}
"""


def test_value_templates_and_explicit_specializations(tmp_path):
    t = port(SRC)
    assert t.kernels == ["series"], [d.format() for d in t.diagnostics]
    assert "unspecialized" in {d.kernel for d in t.blocking}
    n = 1000
    x = rng(21).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "series",
        [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    xd = x.astype(np.float64)
    want = (1 + xd) + 2 * (1 + xd + 0.5 * xd * xd) + 3 * xd
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


INDEX_TYPE = """
// xlate: x: inout[n], n: size(1..4096), k: scalar(1..9), T: float32, I: int32, grid: cdiv(n, 128), block: 128
template <typename T, typename I>
__global__ void divide_by(T* x, I n, I k) {
    I i = blockDim.x * blockIdx.x + threadIdx.x;   // I only types scalars: the spec fixes it
    if (i < n) x[i] = x[i] / k;
}
"""


def test_template_type_of_scalars_only_fixed_by_the_spec(tmp_path):
    t = port(INDEX_TYPE)
    assert t.kernels == ["divide_by"], [d.format() for d in t.diagnostics]
    n = 300
    x = rng(22).standard_normal(n).astype(np.float32)
    out = run(
        t.text, "divide_by", [buf("x", x), ScalarArg("n", n, "int32"), ScalarArg("k", 7, "int32")], tmp_path
    )
    np.testing.assert_array_equal(out["x"], x / np.float32(7))
    guards_intact(out, "x")


TRAIT = """
#include <type_traits>
// xlate: x: in[n], y: out[n], n: size(1..4096), T: float32, grid: cdiv(n, 128), block: 128
template <typename T>
__global__ void by_type(const T* x, T* y, int n) {
    const bool single = std::is_same<T, float>::value;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = single ? x[i] * (T)2 : x[i] * (T)3;
}
"""


def test_is_same_of_a_template_type(tmp_path):
    t = port(TRAIT)
    assert t.kernels == ["by_type"], [d.format() for d in t.diagnostics]
    n = 200
    x = rng(23).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "by_type",
        [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["y"], x * np.float32(2))
    x64 = x.astype(np.float64)
    out = run(
        t.text,
        "by_type",
        [buf("x", x64), buf("y", poisoned(n, np.float64)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["y"], x64 * 3)
