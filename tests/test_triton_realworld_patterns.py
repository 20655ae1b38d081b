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
from xlate.backends.base import BufferArg, ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_lift import run as run_raw

GUARD = 5


def ported(src: str, *kernels: str):
    t = port(src)
    assert t.kernels == list(kernels), [d.format() for d in t.diagnostics]
    return t


def run(text: str, kernel: str, args: list, tmp_path: Path) -> dict[str, np.ndarray]:
    """The port run on the interpreter: each buffer's middle, and its guard bands as NAME@guards."""
    buffers = run_raw(text, kernel, args, tmp_path)
    return {k: v[GUARD:-GUARD] for k, v in buffers.items()} | {f"{k}@guards": np.concatenate([v[:GUARD], v[-GUARD:]])
                                                                for k, v in buffers.items()}


def run_xy(text: str, kernel: str, x: np.ndarray, tmp_path: Path) -> dict[str, np.ndarray]:
    """A `kernel(const float* x, float* y, int n)` port run on `x`, `y` poisoned."""
    n = len(x)
    return run(text, kernel, [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)


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
    out = run_xy(t.text, "cond_kernel", x, tmp_path)
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
    out = run_xy(t.text, "tiled_scale", x, tmp_path)
    np.testing.assert_allclose(out["y"], x.astype(np.float64) * 3 + 128, rtol=1e-6)
    guards_intact(out, "y")


# -- references ----------------------------------------------------------------------------------------------

REFERENCES = """
__device__ unsigned int step_state(unsigned int& s) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    return s;
}
__device__ void add_clamped(float& dst, const float& v, float lim) {
    if (v > lim) { dst += lim; return; }
    dst += v;
}
__device__ void split(float2& p, float& lo) {
    lo = fminf(p.x, p.y);
    p.y = p.x + p.y;
}
// xlate: seed: in[n], x: in[n], cnt: in[n](0..9), y: inout[n], z: out[n], w: out[n],
// xlate: n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void refs(const unsigned int* seed, const float* x, const int* cnt, float* y, unsigned int* z,
                     float* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int s = seed[i] | 1u;
    unsigned int last = 0;
    for (int k = 0; k < cnt[i]; k++) last = step_state(s);   // s changes through the reference
    z[i] = s ^ last;
    float& out = y[i];                                        // a reference to an element of memory
    add_clamped(out, x[i], 0.5f);
    add_clamped(y[i], x[i] * 2.0f, 1.0f);
    float2 p = make_float2(x[i], 1.0f);
    float lo = 0.0f;
    split(p, lo);
    float arr[2] = {0.0f, 0.0f};
    split(p, arr[1]);
    w[i] = p.y + lo * 10.0f + arr[1] * 100.0f;
}
"""


def _xorshift(s: np.ndarray) -> np.ndarray:
    s = s.astype(np.uint64)
    s ^= (s << np.uint64(13)) & np.uint64(0xFFFFFFFF)
    s ^= s >> np.uint64(17)
    s ^= (s << np.uint64(5)) & np.uint64(0xFFFFFFFF)
    return s


def test_reference_parameters_and_references_to_elements(tmp_path):
    t = ported(REFERENCES, "refs")
    n = 203
    g = rng(5)
    seed = g.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = g.standard_normal(n).astype(np.float32)
    cnt = g.integers(0, 10, n).astype(np.int32)
    y = g.standard_normal(n).astype(np.float32)
    out = run(t.text, "refs", [buf("seed", seed), buf("x", x), buf("cnt", cnt), buf("y", y.copy()),
                               buf("z", poisoned(n, np.uint32)), buf("w", poisoned(n, np.float32)),
                               ScalarArg("n", n, "int32")], tmp_path)
    s = seed.astype(np.uint64) | 1
    last = np.zeros(n, np.uint64)
    for k in range(10):
        nxt = _xorshift(s)
        live = k < cnt
        s = np.where(live, nxt, s)
        last = np.where(live, nxt, last)
    assert (out["z"] == (s ^ last)).all()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    y_ref = y64 + np.minimum(x64, 0.5)
    y_ref = y_ref + np.minimum(2 * x64, 1.0)
    np.testing.assert_allclose(out["y"], y_ref, rtol=1e-6, atol=1e-6)
    lo = np.minimum(x64, 1.0)
    py = x64 + 1.0                     # after the first split
    arr1 = np.minimum(x64, py)         # the second split reads the updated p
    py = x64 + py
    np.testing.assert_allclose(out["w"], py + lo * 10 + arr1 * 100, rtol=1e-5, atol=1e-5)
    for name in ("z", "y", "w"):
        guards_intact(out, name)


@pytest.mark.parametrize("body, what", [
    ("float v = x[i]; float& r = v; r = 2.0f; y[i] = v;", "reference 'r' to something other than an element"),
    ("float v = x[i]; swap2(v, v); y[i] = v;", "'v' passed to two reference parameters"),
    ("swap2(y[i], 1.0f + x[i]);", "not a variable or an element of memory"),
])
def test_references_the_lifter_cannot_follow_are_refused(body, what):
    src = """
__device__ void swap2(float& a, float& b) { float t = a; a = b; b = t; }
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { BODY }
}
""".replace("BODY", body)
    t = port(src)
    assert t.kernels == [] and what in t.blocking[0].message, [d.message for d in t.diagnostics]


# -- buffers of vector types -----------------------------------------------------------------------------------

VECTORS = """
typedef float2 cplx;
// xlate: a: in[n], b: in[n], c: out[n], mag: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void cmul(const cplx* a, const cplx* b, cplx* c, float* mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cplx x = a[i], y = b[i];
        c[i] = make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
        const float* flat = (const float*)a;     // the components, in order
        mag[i] = flat[2 * i] * flat[2 * i] + flat[2 * i + 1] * flat[2 * i + 1];
    }
}
"""


def test_buffers_of_vector_types_hold_their_components(tmp_path):
    t = ported(VECTORS, "cmul")
    assert "# xlate: a: in[n, 2]" in t.text  # the port's own spec: the launcher's tensors hold components
    n = 131
    g = rng(6)
    a, b = (g.standard_normal(2 * n).astype(np.float32) for _ in range(2))
    out = run(t.text, "cmul", [buf("a", a), buf("b", b), buf("c", poisoned(2 * n, np.float32)),
                               buf("mag", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    za = a.astype(np.float64)[0::2] + 1j * a.astype(np.float64)[1::2]
    zb = b.astype(np.float64)[0::2] + 1j * b.astype(np.float64)[1::2]
    prod = za * zb
    np.testing.assert_allclose(out["c"][0::2], prod.real, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["c"][1::2], prod.imag, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["mag"], np.abs(za) ** 2, rtol=1e-5)
    guards_intact(out, "c")
    guards_intact(out, "mag")


# -- shared variables --------------------------------------------------------------------------------------------

SHARED_SCALAR = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void minus_first(const float* x, float* y, int n) {
    __shared__ float first;
    __shared__ int count;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        first = x[i];
        count = min(64, n - (int)(blockIdx.x * blockDim.x));
    }
    __syncthreads();
    if (i < n) y[i] = (x[i] - first) * count;
}
"""


def test_shared_scalar_written_by_one_thread_is_seen_by_all(tmp_path):
    t = ported(SHARED_SCALAR, "minus_first")
    n = 150
    x = rng(7).standard_normal(n).astype(np.float32)
    out = run_xy(t.text, "minus_first", x, tmp_path)
    x64 = x.astype(np.float64)
    first = np.repeat(x64[::64], 64)[:n]
    count = np.repeat(np.minimum(64, n - np.arange(0, n, 64)), 64)[:n]
    np.testing.assert_allclose(out["y"], (x64 - first) * count, rtol=1e-5, atol=1e-6)
    guards_intact(out, "y")


def test_shared_scalar_updated_by_every_thread_is_refused():
    src = SHARED_SCALAR.replace("if (threadIdx.x == 0) {", "if (i < n) {")  # a race: no faithful port
    t = port(src)
    assert t.kernels == [] and t.blocking, t.text


# -- multi-dimensional local arrays ------------------------------------------------------------------------------

LOCAL_2D = """
// xlate: m: in[n * 9], v: in[n * 3], y: out[n * 3], n: size(1..4096), grid: cdiv(n, 32), block: 32
__global__ void matvec3(const float* m, const float* v, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a[3][3];
    float r[3];
    for (int row = 0; row < 3; row++)
        for (int col = 0; col < 3; col++)
            a[row][col] = m[i * 9 + row * 3 + col];
    for (int row = 0; row < 3; row++) {
        r[row] = 0.0f;
        for (int col = 0; col < 3; col++) r[row] += a[row][col] * v[i * 3 + col];
    }
    for (int row = 0; row < 3; row++) y[i * 3 + row] = r[row] + a[2 - row][row];
}
"""


def test_multi_dimensional_local_array_at_constant_indices(tmp_path):
    t = ported(LOCAL_2D, "matvec3")
    n = 45
    g = rng(8)
    m, v = g.standard_normal(9 * n).astype(np.float32), g.standard_normal(3 * n).astype(np.float32)
    out = run(t.text, "matvec3", [buf("m", m), buf("v", v), buf("y", poisoned(3 * n, np.float32)),
                                  ScalarArg("n", n, "int32")], tmp_path)
    A = m.astype(np.float64).reshape(n, 3, 3)
    ref = np.einsum("nij,nj->ni", A, v.astype(np.float64).reshape(n, 3))
    ref += np.stack([A[:, 2 - r, r] for r in range(3)], axis=1)
    np.testing.assert_allclose(out["y"], ref.ravel(), rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_multi_dimensional_local_array_at_run_time_index(tmp_path):
    """A run-time index selects among the elements (the lifter once refused it)."""
    t = ported(LOCAL_2D.replace("a[2 - row][row]", "a[(int)v[i * 3] & 1][row]"), "matvec3")
    n = 45
    g = rng(8)
    m, v = g.standard_normal(9 * n).astype(np.float32), (4 * g.standard_normal(3 * n)).astype(np.float32)
    out = run(t.text, "matvec3", [buf("m", m), buf("v", v), buf("y", poisoned(3 * n, np.float32)),
                                  ScalarArg("n", n, "int32")], tmp_path)
    A = m.astype(np.float64).reshape(n, 3, 3)
    ref = np.einsum("nij,nj->ni", A, v.astype(np.float64).reshape(n, 3))
    sel = np.trunc(v[0::3]).astype(np.int64) & 1
    ref += A[np.arange(n), sel, :]
    np.testing.assert_allclose(out["y"], ref.ravel(), rtol=1e-5, atol=1e-5)


def test_chained_assignments_to_variables(tmp_path):
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void chain(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a, b;
    a = b = 0.0f;
    if (i < n) a = b = x[i] * 2.0f;
    float c = b += 1.0f;
    if (i < n) y[i] = a * 100.0f + b * 10.0f + c;
}
"""
    t = ported(src, "chain")
    n = 90
    x = rng(9).standard_normal(n).astype(np.float32)
    out = run_xy(t.text, "chain", x, tmp_path)
    a = x.astype(np.float64) * 2
    b = a + 1
    np.testing.assert_allclose(out["y"], a * 100 + b * 10 + b, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")
    # an assignment read as a value inside a condition: lifted too (it used to be refused)
    t = ported(src.replace("a = b = x[i] * 2.0f;", "y[i] = (b = x[i]) > 0 ? 1.0f : 0.0f;"), "chain")
    out = run_xy(t.text, "chain", x, tmp_path)
    np.testing.assert_allclose(out["y"], (x.astype(np.float64) + 1) * 11, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_macros_defined_in_the_body_and_casts_to_typedef_names(tmp_path):
    src = """
typedef double Real_t;
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void body_macros(const Real_t* x, Real_t* y, int n) {
#define IDX (blockIdx.x * blockDim.x + threadIdx.x)
#define SQ(a) ((a) * (a))
    int i = IDX;
    if (i < n) y[i] = SQ(x[i]) + Real_t(i / 2) + Real_t(0.1f);
#undef IDX
#undef SQ
}
"""
    t = ported(src, "body_macros")
    n = 77
    x = rng(10).standard_normal(n)
    out = run(t.text, "body_macros", [buf("x", x), buf("y", poisoned(n, np.float64)), ScalarArg("n", n, "int32")],
              tmp_path)
    ref = x * x + np.arange(n) // 2 + float(np.float32(0.1))
    np.testing.assert_array_equal(out["y"], ref)
    guards_intact(out, "y")
    twice = src.replace("#undef IDX", "#undef IDX\n#define IDX 0")  # redefined in the body: not followed
    assert port(twice).kernels == []


def test_float_scalar_in_uniform_arithmetic_is_float32(tmp_path):
    src = """
// xlate: x: in[n], y: out[n], sigma: scalar(0.5..5), n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void window(const float* x, float* y, float sigma, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int size = (int)(3.0f * sigma);           // uniform: computed once per program, from a float32 sigma
    float third = sigma / 3.0f;
    if (i < n) y[i] = x[i] * size + third;
}
"""
    t = ported(src, "window")
    n = 100
    x = rng(11).standard_normal(n).astype(np.float32)
    sigma = 1.1  # 3 * float32(1.1) rounds below 3.3 in float32: size 3 either way, third in float32
    out = run(t.text, "window", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("sigma", sigma, "float32"),
                                 ScalarArg("n", n, "int32")], tmp_path)
    s32 = np.float32(sigma)
    size = int(np.float32(3.0) * s32)
    ref = x.astype(np.float64) * size + float(s32 / np.float32(3.0))
    np.testing.assert_allclose(out["y"], ref, rtol=1e-6, atol=1e-7)
    guards_intact(out, "y")
