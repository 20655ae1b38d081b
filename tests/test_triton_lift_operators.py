"""Arithmetic on CUDA vector types goes through the operators the program defines for them (helper_math.h's
`float2 operator*(float2, float)` and the like): the lifter inlines the overload whose parameter types match the
operands, so a program whose `operator*` is not componentwise (here: complex multiplication) is ported with its
own meaning. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
inline __host__ __device__ float2 operator*(float2 a, float2 b) {   // complex product
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline __host__ __device__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }
inline __host__ __device__ float2 operator*(float s, float2 a) { return make_float2(s * a.x, s * a.y); }
inline __host__ __device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
inline __host__ __device__ float2 operator-(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }

// xlate: z: in[n], w: in[n], out: inout[n], k: in[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void mix(const float2* z, const float2* w, float2* out, const float* k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 acc = out[i];
    acc += z[i] * w[i];          // compound assignment through operator+
    acc = acc - 0.5f * z[i];     // float * float2
    out[i] = acc * k[i] * 2;     // float2 * float, then float2 * int (an arithmetic conversion to float)
}

// xlate: z: in[n], out: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void no_division(const float2* z, float2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = z[i] / z[i];  // the program defines no operator/
}
"""


def test_vector_arithmetic_uses_the_programs_operators(tmp_path):
    t = port(SRC)
    assert t.kernels == ["mix"], [d.format() for d in t.diagnostics]
    assert "no_division" in {d.kernel for d in t.blocking}
    n = 777
    g = rng(7)
    z = g.standard_normal(2 * n).astype(np.float32)
    w = g.standard_normal(2 * n).astype(np.float32)
    o = g.standard_normal(2 * n).astype(np.float32)
    k = g.standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "mix",
        [buf("z", z), buf("w", w), buf("out", o.copy()), buf("k", k), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    zc = z[0::2].astype(np.float64) + 1j * z[1::2]
    wc = w[0::2].astype(np.float64) + 1j * w[1::2]
    oc = o[0::2].astype(np.float64) + 1j * o[1::2]
    want = (oc + zc * wc - 0.5 * zc) * k * 2
    got = out["out"][0::2] + 1j * out["out"][1::2]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "out")


def test_vector_operators_unused_leave_plain_code(tmp_path):
    # a kernel with no vector arithmetic is unchanged by the program's operators
    src = (
        SRC
        + """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2;
}
"""
    )
    t = port(src)
    assert "twice" in t.kernels
    x = rng(8).standard_normal(100).astype(np.float32)
    out = run(
        t.text,
        "twice",
        [buf("x", x), buf("y", poisoned(100, np.float32)), ScalarArg("n", 100, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["y"], x * np.float32(2))
