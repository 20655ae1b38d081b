"""Calls and names the CUDA -> Triton lifter resolves in real kernels: macros that paste or stringise, device
functions of headers whose qualifier macro depends on the compiler, and CUDA library functions (half2
conversions, compare-and-swap ...). Each case is a small kernel written here, run on the Triton interpreter
against NumPy, with sizes that are no multiple of the block and outputs poisoned before the run."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.cir import cpre
from xlate.model import Macro
from xlate.parse import parse_file
from xlate.parse.normalize import qualifier_macros
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

U64 = (1 << 64) - 1


# -- the preprocessor's # and ## ---------------------------------------------------------------------------------


def test_pasting_and_stringising_follow_c():
    ms = [Macro("CAT", ["a", "b"], "a ## b", None), Macro("XCAT", ["a", "b"], "CAT(a, b)", None),
          Macro("N", None, "7", None), Macro("STR", ["x"], "#x", None), Macro("Q", ["a", "b"], "q a##b", None),
          Macro("OBJ", None, "x ## y", None)]

    def flat(text: str) -> str:
        return cpre.expand(text, ms).text.strip()

    assert flat("CAT(img, _p)[i]") == "img_p [i]"
    assert flat("CAT(N, 1)") == "N1"  # an argument beside ## is not expanded first
    assert flat("XCAT(N, 1)") == "71"  # ... but is when it reaches ## through another macro
    assert flat("CAT(0x1f, ULL)") == "0x1fULL"
    assert flat("CAT(, z)") == "z" and flat("CAT(z, )") == "z" and flat("Q(, w)") == "q w"  # empty arguments
    assert flat('STR( a  +  "b\\n" )') == '"a + \\"b\\\\n\\""'
    assert flat("OBJ") == "xy"


def test_a_constant_macro_that_pastes_its_suffix(tmp_path):
    src = """
#define WIDE(x) (x##ULL)
#define MIX(h) h ^= h >> 33; h *= WIDE(0xff51afd7ed558ccd); h ^= h >> 29
// xlate: keys: in[n], out: out[n], n: size(1..2000), grid: cdiv(n, 128), block: 128
__global__ void scramble(const unsigned long long* keys, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long h = keys[i] + WIDE(0x9e3779b97f4a7c15);
        MIX(h);
        out[i] = h;
    }
}
"""
    t = ported(src, "scramble")
    n = 777
    keys = rng(11).integers(0, 2**63, n, dtype=np.uint64) * np.uint64(3)
    out = run(t.text, "scramble", [buf("keys", keys), buf("out", poisoned(n, np.uint64)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = []
    for k in keys.tolist():
        h = (k + 0x9E3779B97F4A7C15) & U64
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & U64
        h ^= h >> 29
        want.append(h)
    assert out["out"].tolist() == want
    guards_intact(out, "out")



def test_a_macro_defined_over_several_lines_inside_a_function(tmp_path):
    src = """
__device__ float triple(float a, float b, float c, float d) {
    float s = a + b;
#define CROSS(x1, y1, x2, y2) \\
    ((x1) * (y2) - \\
     (y1) * (x2))
    float v = CROSS(s, c, d, a) + CROSS(b, d, c, s);
#undef CROSS
    return v;
}
// xlate: x: in[n * 4], y: out[n], n: size(1..2000), grid: cdiv(n, 128), block: 128
__global__ void crosses(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = triple(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
}
"""
    t = ported(src, "crosses")
    n = 555
    x = rng(23).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "crosses", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    a, b, c, d = (x[k::4].astype(np.float64) for k in range(4))
    s = a + b
    np.testing.assert_allclose(out["y"], (s * a - c * d) + (b * s - d * c), rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_a_parenthesised_variable_before_a_minus_is_no_cast(tmp_path):
    src = """
// xlate: x: in[n * 3], y: out[n], n: size(1..2000), grid: cdiv(n, 128), block: 128
__global__ void diffs(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2];
    if (i < n) y[i] = (a) * (b) - (c) * (a) + (float) -b + (c) - (b);
}
"""
    t = ported(src, "diffs")
    n = 700
    x = rng(24).standard_normal(3 * n).astype(np.float32)
    out = run(t.text, "diffs", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    a, b, c = (x[k::3].astype(np.float64) for k in range(3))
    np.testing.assert_allclose(out["y"], a * b - c * a - b + c - b, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")

# -- device functions of headers, local arrays passed to them ------------------------------------------------------

BUTTERFLY_H = """
#pragma once
#if defined(__CUDACC__) || defined(__HIPCC__)
  #define DEV __forceinline__ __device__
#else
  #define DEV inline
#endif
typedef unsigned long long u64;

DEV u64 wrap_add(u64 a, u64 b) { u64 r = a + b; if (r < a) r += 0xffffffffULL; return r; }

// an in-place butterfly over four elements: the caller's array is read and written through the pointer
DEV void butterfly4(u64 *v, const u64 *w) {
    u64 t0 = wrap_add(v[0], v[2]), t1 = v[0] - v[2];
    u64 t2 = wrap_add(v[1], v[3]), t3 = (v[1] - v[3]) * w[1];
    v[0] = wrap_add(t0, t2);
    v[1] = t0 - t2;
    if (t1 & 1) return;  // an early return leaves v[2] and v[3] as they were
    v[2] = wrap_add(t1, t3);
    v[3] = t1 - t3 + w[0];
}
"""

BUTTERFLY_CU = """
#include "butterfly.h"
// xlate: src: in[n * 4], dst: out[n * 4], n: size(1..900), grid: cdiv(n, 64), block: 64
__global__ void butterflies(const u64* src, u64* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    u64 vals[4], tw[2];
    tw[0] = 7; tw[1] = (u64)i + 3;
    if (i < n) {
        for (int k = 0; k < 4; k++) vals[k] = src[4 * i + k];
        butterfly4(vals, tw);
        for (int k = 0; k < 4; k++) dst[4 * i + k] = vals[k];
    }
}
"""


def _butterfly_reference(src: np.ndarray) -> list[int]:
    def wrap_add(a: int, b: int) -> int:
        r = (a + b) & U64
        return (r + 0xFFFFFFFF) & U64 if r < a else r

    out = []
    for i, v in enumerate(src.reshape(-1, 4).tolist()):
        w = [7, i + 3]
        t0, t1 = wrap_add(v[0], v[2]), (v[0] - v[2]) & U64
        t2, t3 = wrap_add(v[1], v[3]), ((v[1] - v[3]) * w[1]) & U64
        v[0], v[1] = wrap_add(t0, t2), (t0 - t2) & U64
        if not t1 & 1:
            v[2], v[3] = wrap_add(t1, t3), (t1 - t3 + w[0]) & U64
        out += v
    return out


def test_header_device_function_takes_a_local_array_by_pointer(tmp_path):
    d = tmp_path / "prog"
    d.mkdir()
    (d / "butterfly.h").write_text(BUTTERFLY_H)
    (d / "main.cu").write_text(BUTTERFLY_CU)
    unit = parse_file(d / "main.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["butterflies"], [x.format() for x in t.diagnostics]
    n = 301
    src = rng(12).integers(0, 2**64, 4 * n, dtype=np.uint64, endpoint=False)
    src[::7] = U64  # wrap-around sums
    out = run(t.text, "butterflies", [buf("src", src), buf("dst", poisoned(4 * n, np.uint64)),
                                      ScalarArg("n", n, "int32")], tmp_path)
    assert out["dst"].tolist() == _butterfly_reference(src)
    guards_intact(out, "dst")


def test_compiler_test_branches_of_a_qualifier_macro_take_the_device_one():
    text = b"#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD inline\n#endif\n#define E\n#define E2 inline\n"
    found = qualifier_macros(text)
    assert found["HD"] == ("__host__", "__device__") and found["E"] == () and found["E2"] == ("inline",)


def test_a_local_array_passed_to_two_pointer_parameters_is_refused():
    src = """
__device__ void swap2(float* a, float* b) { float t = a[0]; a[0] = b[0]; b[0] = t; }
// xlate: y: out[n], n: size(1..900), grid: cdiv(n, 64), block: 64
__global__ void twice(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[2] = {1.0f, 2.0f};
    swap2(v, v);
    if (i < n) y[i] = v[0];
}
"""
    t = port(src)
    assert t.kernels == []
    assert "'v' passed to two pointer parameters of 'swap2'" in t.diagnostics[0].message  # copies would not alias


# -- names of the program ------------------------------------------------------------------------------------------

CONSTS_H = """
#pragma once
namespace other { const int Base = 100; }
namespace consts {
const int Base = 3;
namespace deep { const float Scale = 0.5f; }
}
"""

CONSTS_CU = """
#include "consts.h"
// xlate: x: in[n], y: out[n], n: size(1..2000), grid: cdiv(n, 128), block: 128
__global__ void offset_scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * consts::deep::Scale + consts::Base + ::other::Base * (i & 1);
}
"""


def test_namespace_qualified_constants_of_a_header(tmp_path):
    d = tmp_path / "prog"
    d.mkdir()
    (d / "consts.h").write_text(CONSTS_H)
    (d / "main.cu").write_text(CONSTS_CU)
    unit = parse_file(d / "main.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["offset_scale"], [x.format() for x in t.diagnostics]
    n = 1001
    x = rng(13).standard_normal(n).astype(np.float32)
    out = run(t.text, "offset_scale", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = x.astype(np.float64) * 0.5 + 3 + 100 * (np.arange(n) & 1)
    np.testing.assert_allclose(out["y"], want.astype(np.float32), rtol=1e-6)
    guards_intact(out, "y")


def test_parameters_with_default_arguments(tmp_path):
    src = """
#define BIAS 5
__device__ int shifted(int v, int by = 2, int plus = BIAS + 1) { return (v << by) + plus; }
// xlate: x: in[n], y: out[n], n: size(1..2000), base: scalar(-50..50) as int32, grid: cdiv(n, 128), block: 128
__global__ void with_defaults(const int* x, int* y, int n, const int base = 0) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = shifted(x[i]) + shifted(x[i], 1) + shifted(x[i], 3, -1) + base;
}
"""
    t = ported(src, "with_defaults")
    n = 999
    x = rng(14).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "with_defaults", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32"),
                                        ScalarArg("base", 17, "int32")], tmp_path)
    xi = x.astype(np.int64)
    want = ((xi << 2) + 6) + ((xi << 1) + 6) + ((xi << 3) - 1) + 17
    assert out["y"].tolist() == want.tolist()
    guards_intact(out, "y")


def test_struct_constructors_with_initialiser_lists(tmp_path):
    src = """
struct Cell {
    __host__ __device__ Cell(int col, int row) : c(col), r(row) { };
    __device__ explicit Cell(int diag) : c(diag), r(diag + 1) {}
    int c;
    int r;
};
struct Pair {
    __device__ Pair(float v) : hi(v * 2.0f), lo(v - 1.0f) {}
    float hi, lo;
};
__device__ int flat(const int width, const Cell& at) { return at.r * width + at.c; }
// xlate: img: in[h * w], out: out[h * w], w: size(1..90), h: size(1..40), grid: cdiv(w * h, 64), block: 64
__global__ void shifted_copy(const float* img, float* out, int w, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h) {
        int x = i % w, y = i / w;
        Cell src = (x + 1 < w) ? Cell(x + 1, y) : Cell(x);
        Pair p(img[i] + 0.5f);
        Cell here(x + 0, y);
        float v = (src.r < h && src.c < w) ? img[flat(w, src)] : -1.0f;
        out[flat(w, here)] = v + p.hi * p.lo;
    }
}
"""
    t = ported(src, "shifted_copy")
    w, h = 37, 11
    img = rng(15).standard_normal(w * h).astype(np.float32)
    out = run(t.text, "shifted_copy", [buf("img", img), buf("out", poisoned(w * h, np.float32)),
                                       ScalarArg("w", w, "int32"), ScalarArg("h", h, "int32")], tmp_path)
    want = np.empty(w * h)
    for i in range(w * h):
        x, y = i % w, i // w
        c, r = (x + 1, y) if x + 1 < w else (x, x + 1)
        v = float(img[r * w + c]) if r < h and c < w else -1.0
        vi = np.float32(img[i] + np.float32(0.5))
        hi, lo = np.float32(vi * np.float32(2)), np.float32(vi - np.float32(1))
        want[i] = v + float(hi * lo)
    np.testing.assert_allclose(out["out"], want.astype(np.float32), rtol=1e-6)
    guards_intact(out, "out")


def test_a_constructor_with_statements_stays_refused():
    src = """
struct Acc {
    __device__ Acc(float v) : s(0.0f) { s = v * v; }
    float s;
};
// xlate: x: in[n], y: out[n], n: size(1..900), grid: cdiv(n, 64), block: 64
__global__ void built(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = Acc(x[i]).s;
}
"""
    t = port(src)
    assert t.kernels == [] and "call of 'Acc'" in t.diagnostics[0].message


# -- half and bfloat16 pairs ---------------------------------------------------------------------------------------


def test_half2_conversions_and_fused_multiply_add(tmp_path):
    src = """
#include <cuda_fp16.h>
// xlate: a: in[n], b: in[n], h: in[2 * n] as float16, out: out[4 * n] as float16, f: out[2 * n], n: size(1..900),
// xlate: grid: cdiv(n, 64), block: 64
__global__ void pairs(const float* a, const float* b, const __half* h, __half* out, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        half2 p = __floats2half2_rn(a[i], b[i]);
        half2 q = __halves2half2(h[2 * i], h[2 * i + 1]);
        half2 r = __hfma2(p, q, __float2half2_rn(0.25f));
        float2 g = __half22float2(r);
        out[4 * i] = __low2half(r);
        out[4 * i + 1] = __high2half(r);
        out[4 * i + 2] = __low2half(__highs2half2(p, q));
        out[4 * i + 3] = __high2half(__lows2half2(p, __half2half2(__hneg(h[2 * i]))));
        f[2 * i] = g.x + __high2float(q);
        f[2 * i + 1] = g.y * 2.0f - __low2float(__float22half2_rn(g));
    }
}
"""
    t = ported(src, "pairs")
    n = 301
    r = rng(16)
    a = r.standard_normal(n).astype(np.float32) * 4
    b = r.standard_normal(n).astype(np.float32)
    # edges: halfway between two halves (rounds to even), past the largest half, below the smallest, NaN
    a[:6] = [1 + 2.0**-11, 1 + 3 * 2.0**-11, 70000.0, 1e-8, np.nan, -65520.0]
    h = r.standard_normal(2 * n).astype(np.float16)
    out = run(t.text, "pairs", [buf("a", a), buf("b", b), buf("h", h), buf("out", poisoned(4 * n, np.float16)),
                                buf("f", poisoned(2 * n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    p = np.stack([a.astype(np.float16), b.astype(np.float16)], 1)
    q = h.reshape(n, 2)
    with np.errstate(invalid="ignore", over="ignore"):
        rr = (p.astype(np.float64) * q.astype(np.float64) + 0.25).astype(np.float16)
        want = np.stack([rr[:, 0], rr[:, 1], p[:, 1], -q[:, 0]], 1).reshape(-1)
        g = rr.astype(np.float32)
        fw = np.stack([g[:, 0] + q[:, 1].astype(np.float32),
                       g[:, 1] * np.float32(2) - g[:, 0].astype(np.float16).astype(np.float32)], 1).reshape(-1)
    assert p[0, 0] == 1.0 and p[1, 0] == np.float16(1 + 2.0**-9) and np.isinf(p[2, 0]) and p[3, 0] == 0
    np.testing.assert_array_equal(out["out"], want)
    np.testing.assert_array_equal(out["f"], fw)
    guards_intact(out, "out")
    guards_intact(out, "f")


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, rounded to nearest even (NaN kept quiet)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def test_bfloat162_conversions(tmp_path):
    src = """
#include <cuda_bf16.h>
// xlate: a: in[n], b: in[n], f: out[3 * n], n: size(1..900), grid: cdiv(n, 64), block: 64
__global__ void bpairs(const float* a, const float* b, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __nv_bfloat162 p = __floats2bfloat162_rn(a[i], b[i]);
        float2 g = __bfloat1622float2(__highs2bfloat162(p, __float2bfloat162_rn(b[i] * 2.0f)));
        f[3 * i] = __bfloat162float(__low2bfloat16(p));
        f[3 * i + 1] = g.x;
        f[3 * i + 2] = g.y;
    }
}
"""
    t = ported(src, "bpairs")
    n = 257
    r = rng(17)

    def bf(x: np.ndarray) -> np.ndarray:
        return (_bf16_bits(x).astype(np.uint32) << 16).view(np.float32)

    # values bfloat16 holds exactly: the interpreter truncates float32 -> bfloat16 where the GPU rounds to
    # nearest even (Triton's cast; _bf16_bits), so only the lanes' plumbing is checked here
    a = bf(r.standard_normal(n).astype(np.float32))
    b = bf(r.standard_normal(n).astype(np.float32))
    out = run(t.text, "bpairs", [buf("a", a), buf("b", b), buf("f", poisoned(3 * n, np.float32)),
                                 ScalarArg("n", n, "int32")], tmp_path)
    want = np.stack([a, b, b * np.float32(2)], 1).reshape(-1)
    np.testing.assert_array_equal(out["f"], want)
    guards_intact(out, "f")


def test_a_local_array_a_call_changes_inside_a_run_time_loop_is_carried(tmp_path):
    src = """
__device__ void rotate3(int* v) { int t = v[0]; v[0] = v[1]; v[1] = v[2]; v[2] = t + 1; }
// xlate: x: in[n], y: out[n], n: size(1..3000), steps: scalar(0..9) as int32, grid: cdiv(n, 64), block: 64
__global__ void rotations(const int* x, int* y, int n, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v[3] = {0, 0, 0};
    if (i < n) v[0] = x[i];
    for (int s = 0; s < steps; s++) rotate3(v);
    if (i < n) y[i] = v[0] * 100 + v[1] * 10 + v[2];
}
"""
    t = ported(src, "rotations")
    n = 333
    x = rng(18).integers(-50, 50, n).astype(np.int32)
    for steps in (0, 4):
        out = run(t.text, "rotations", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32"),
                                        ScalarArg("steps", steps, "int32")], tmp_path)
        v = [x.astype(np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)]
        for _ in range(steps):
            v = [v[1], v[2], v[0] + 1]
        assert out["y"].tolist() == (v[0] * 100 + v[1] * 10 + v[2]).tolist()
        guards_intact(out, "y")


# -- compare-and-swap ----------------------------------------------------------------------------------------------


def test_compare_and_swap_claims_each_slot_once(tmp_path):
    src = """
// xlate: keys: in[n](0..m-1), owner: inout[m], won: out[n], n: size(1..3000), m: size(1..60),
// xlate: grid: cdiv(n, 128), block: 128
__global__ void claim(const int* keys, int* owner, int* won, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int old = atomicCAS(&owner[keys[i]], 0, i + 1);
        won[i] = old == 0 ? 1 : -old;
    }
}

// xlate: flags: inout[g], g: size(1..40), grid: g, block: 64
__global__ void mark_once(unsigned long long* flags, int g) {
    if (threadIdx.x == 0) atomicCAS(flags + blockIdx.x, 0ULL, 0xFFFFFFFF00000000ULL + blockIdx.x);
}
"""
    t = port(src)
    assert t.kernels == ["claim", "mark_once"], [x.format() for x in t.diagnostics]
    n, m = 1000, 37
    keys = rng(19).integers(0, m, n).astype(np.int32)
    keys[:5] = 36  # one key met by several threads of one block
    owner = np.zeros(m, np.int32)
    owner[[3, 7]] = [-5, 9]  # already claimed: nobody wins those
    out = run(t.text, "claim", [buf("keys", keys), buf("owner", owner.copy()), buf("won", poisoned(n, np.int32)),
                                ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    own, won = out["owner"], out["won"]
    for k in range(m):
        mine = np.flatnonzero(keys == k)
        if owner[k] != 0:
            assert own[k] == owner[k] and (won[mine] == -owner[k]).all()
        elif len(mine):
            winner = own[k] - 1
            assert winner in mine and won[winner] == 1
            assert (won[mine[mine != winner]] == -own[k]).all()
        else:
            assert own[k] == 0
    guards_intact(out, "won")
    guards_intact(out, "owner")
    g = 23
    flags = np.zeros(g, np.uint64)
    flags[::4] = 17
    out = run(t.text, "mark_once", [buf("flags", flags.copy()), ScalarArg("g", g, "int32")], tmp_path)
    want = np.where(flags == 0, np.uint64(0xFFFFFFFF00000000) + np.arange(g, dtype=np.uint64), flags)
    assert out["flags"].tolist() == want.tolist()
    guards_intact(out, "flags")


def test_compare_and_swap_on_shared_memory_is_refused():
    src = """
// xlate: y: out[n], n: size(1..900), grid: cdiv(n, 64), block: 64
__global__ void shared_cas(int* y, int n) {
    __shared__ int slot;
    if (threadIdx.x == 0) slot = 0;
    __syncthreads();
    int old = atomicCAS(&slot, 0, threadIdx.x + 1);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = old;
}
"""
    t = port(src)
    assert t.kernels == [] and "atomicCAS on shared memory" in t.diagnostics[0].message


# -- fp8 -----------------------------------------------------------------------------------------------------------


def _fp8_value(code: int, mbits: int, bias: int) -> Fraction:
    """The magnitude of a positive fp8 code (exponent field 0: subnormal), extended past the largest finite."""
    e, m = code >> mbits, code & ((1 << mbits) - 1)
    if e == 0:
        return Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def _to_fp8(x: float, mbits: int, bias: int, maxcode: int, sat: bool, ovf: int) -> int:
    """CUDA's __nv_cvt_float_to_fp8 from its definition: the nearest code, ties to the even one; a value that
    rounds past the largest finite (or an infinity) saturates or gives `ovf`; NaN is 0x7F."""
    if np.isnan(x):
        return 0x7F
    sign = 0x80 if np.signbit(x) else 0
    if np.isinf(x):
        return sign | (maxcode if sat else ovf)
    v = Fraction(abs(float(x)))
    codes = range(maxcode + 2)  # maxcode + 1: the value just past the largest finite
    best = min(codes, key=lambda c: (abs(_fp8_value(c, mbits, bias) - v), c & 1))
    if best > maxcode:
        return sign | (maxcode if sat else ovf)
    return sign | best


def test_float_to_fp8_conversions_round_to_nearest_even_and_saturate(tmp_path):
    src = """
#include <cuda_fp8.h>
// xlate: x: in[n], q: out[4 * n] as uint8, n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void to_fp8(const float* x, unsigned char* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[4 * i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
        q[4 * i + 1] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
        q[4 * i + 2] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
        q[4 * i + 3] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
    }
}
"""
    t = ported(src, "to_fp8")
    r = rng(20)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448.0, 464.0, 464.01, 480.0, -500.0, 57344.0, 61439.0,
             61440.0, 1e30, 2.0**-9, 2.0**-10, 1.1 * 2.0**-10, 3 * 2.0**-10, 2.0**-16, 2.0**-17, 1.2 * 2.0**-17,
             1e-30, 1.0625, 1.1875, 1.125, 1.375, -2.0**-6 * 1.0625, 0.1, 3.0e-45, 240.0, 248.0, 256.0]
    x = np.concatenate([np.array(edges, np.float32), (r.standard_normal(300) * 10.0 ** r.integers(-6, 5, 300)).astype(np.float32)])
    n = len(x)
    out = run(t.text, "to_fp8", [buf("x", x), buf("q", poisoned(4 * n, np.uint8)), ScalarArg("n", n, "int32")], tmp_path)
    want = [f(v) for v in x.tolist() for f in (lambda v: _to_fp8(v, 3, 7, 0x7E, True, 0x7F),
                                                lambda v: _to_fp8(v, 3, 7, 0x7E, False, 0x7F),
                                                lambda v: _to_fp8(v, 2, 15, 0x7B, True, 0x7C),
                                                lambda v: _to_fp8(v, 2, 15, 0x7B, False, 0x7C))]
    got = out["q"].tolist()
    bad = [(x[k // 4], k % 4, got[k], want[k]) for k in range(4 * n) if got[k] != want[k]]
    assert not bad, bad[:10]
    guards_intact(out, "q")


# -- integer intrinsics at their edges -----------------------------------------------------------------------------


def test_24_bit_and_high_half_multiplies_and_absolute_differences(tmp_path):
    src = """
// xlate: a: in[n], b: in[n], out: out[6 * n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void int_ops(const int* a, const int* b, unsigned int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int ua = (unsigned int)a[i], ub = (unsigned int)b[i];
        out[6 * i] = (unsigned int)__mul24(a[i], b[i]);
        out[6 * i + 1] = __umul24(ua, ub);
        out[6 * i + 2] = __umulhi(ua, ub);
        out[6 * i + 3] = (unsigned int)__mulhi(a[i], b[i]);
        out[6 * i + 4] = __sad(a[i], b[i], ub);
        out[6 * i + 5] = __usad(ua, ub, 7u);
    }
}
"""
    t = ported(src, "int_ops")
    r = rng(21)
    a = r.integers(-2**31, 2**31, 400, dtype=np.int64)
    b = r.integers(-2**31, 2**31, 400, dtype=np.int64)
    edges = [(0, 0), (-1, -1), (2**31 - 1, 2**31 - 1), (-2**31, -2**31), (-2**31, 2**31 - 1), (0x800000, 0x7FFFFF),
             (0xFF800000 - 2**32, 3), (0x00FFFFFF, 0x00FFFFFF), (0x12345678, -0x12345678), (-1, 1)]
    a = np.concatenate([[p for p, _ in edges], a]).astype(np.int32)
    b = np.concatenate([[q for _, q in edges], b]).astype(np.int32)
    n = len(a)
    out = run(t.text, "int_ops", [buf("a", a), buf("b", b), buf("out", poisoned(6 * n, np.uint32)),
                                  ScalarArg("n", n, "int32")], tmp_path)
    m32 = (1 << 32) - 1

    def s24(v: int) -> int:  # the low 24 bits, as a signed 24-bit number
        v &= 0xFFFFFF
        return v - (1 << 24) if v & 0x800000 else v

    want = []
    for x, y in zip(a.tolist(), b.tolist()):
        ux, uy = x & m32, y & m32
        want += [(s24(x) * s24(y)) & m32, ((ux & 0xFFFFFF) * (uy & 0xFFFFFF)) & m32, (ux * uy) >> 32,
                 ((x * y) >> 32) & m32, (abs(x - y) + uy) & m32, (abs(ux - uy) + 7) & m32]
    assert out["out"].tolist() == want
    guards_intact(out, "out")


def test_half_and_bfloat16_bits_as_integers_and_back(tmp_path):
    src = """
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// xlate: bits: in[n] as uint16, h: out[n] as float16, back: out[2 * n] as uint16, f: out[n], n: size(1..3000),
// xlate: grid: cdiv(n, 128), block: 128
__global__ void bit_views(const unsigned short* bits, __half* h, unsigned short* back, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half v = __ushort_as_half(bits[i]);
        h[i] = v;
        back[2 * i] = __half_as_ushort(__hneg(v));
        __nv_bfloat16 b = __ushort_as_bfloat16(bits[i]);
        back[2 * i + 1] = (unsigned short)__bfloat16_as_short(b) ^ 0x8000u;
        f[i] = __bfloat162float(b);
    }
}
"""
    t = ported(src, "bit_views")
    bits = np.concatenate([np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x0001, 0x3C00, 0x7F80, 0xFF81],
                                    np.uint16), rng(22).integers(0, 2**16, 500).astype(np.uint16)])
    n = len(bits)
    out = run(t.text, "bit_views", [buf("bits", bits), buf("h", poisoned(n, np.float16)),
                                    buf("back", poisoned(2 * n, np.uint16)), buf("f", poisoned(n, np.float32)),
                                    ScalarArg("n", n, "int32")], tmp_path)
    assert out["h"].view(np.uint16).tolist() == bits.tolist()  # every pattern, NaN payloads included
    flipped = (bits ^ 0x8000).tolist()
    assert out["back"].tolist() == [w for pair in zip(flipped, flipped) for w in pair]
    # bfloat16 -> float is exact on the GPU; the interpreter flushes bfloat16 subnormals, so those are left out
    normal = (bits & 0x7F80) != 0
    assert out["f"].view(np.uint32)[normal].tolist() == (bits[normal].astype(np.uint32) << 16).tolist()
    guards_intact(out, "back")
