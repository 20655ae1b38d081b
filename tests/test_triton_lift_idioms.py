"""CUDA idioms the CUDA -> Triton lifter lifts (issue #15): break and continue in data-dependent loops,
assignments and ++/-- used as values, std::numeric_limits of template types, and the intrinsics and device-side
helpers listed with each test. Each kernel is written here; each port runs on the Triton interpreter against
NumPy, with poisoned outputs, guard bands, and sizes that are not multiples of the block."""

from __future__ import annotations

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

# -- break and continue in data-dependent loops --------------------------------------------------------------

SEARCH = """
// xlate: keys: in[m], q: in[n], pos: out[n], m: size(1..500), n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void first_match(const int* keys, const int* q, int* pos, int m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int want = q[i];
    int found = -1;
    for (int j = 0; j < m; j++) {
        if (keys[j] < 0) continue;
        if (keys[j] == want) { found = j; break; }
    }
    pos[i] = found;
}

// xlate: x: in[n], steps: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void collatz_capped(const int* x, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = x[i];
        int s = 0;
        while (v != 1) {
            s++;
            if (s > 40) { s = -s; break; }
            if (v % 2 == 0) { v = v / 2; continue; }
            v = 3 * v + 1;
        }
        steps[i] = s;
    }
}
"""


def _first_match(keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    out = np.full(len(q), -1, np.int32)
    for i, w in enumerate(q):
        hits = np.nonzero((keys == w) & (keys >= 0))[0]
        if len(hits):
            out[i] = hits[0]
    return out


def _collatz(x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x), np.int32)
    for i, v in enumerate(x.astype(np.int64)):
        s = 0
        while v != 1:
            s += 1
            if s > 40:
                s = -s
                break
            v = v // 2 if v % 2 == 0 else 3 * v + 1
        out[i] = s
    return out


def test_break_and_continue_in_data_dependent_loops(tmp_path):
    t = ported(SEARCH, "first_match", "collatz_capped")
    m, n = 37, 301
    keys = rng(1).integers(-3, 20, m).astype(np.int32)
    q = rng(2).integers(-2, 25, n).astype(np.int32)
    out = run(t.text, "first_match", [buf("keys", keys), buf("q", q), buf("pos", poisoned(n, np.int32)),
                                      ScalarArg("m", m, "int32"), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["pos"], _first_match(keys, q))
    guards_intact(out, "pos")
    x = rng(3).integers(1, 60, n).astype(np.int32)
    out = run(t.text, "collatz_capped", [buf("x", x), buf("steps", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_array_equal(out["steps"], _collatz(x))
    guards_intact(out, "steps")


# -- assignments and ++/-- used as values ------------------------------------------------------------------

ASSIGN_VALUES = """
// xlate: nxt: in[m], start: in[n], hops: out[n], last: out[n], m: size(1..500), n: size(1..3000)
// xlate: grid: cdiv(n, 128), block: 128
__global__ void chase(const int* nxt, const int* start, int* hops, int* last, int m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = start[i];
    int prev = v;
    int h = 0;
    while ((v = nxt[v]) >= 0) { prev = v; h++; }
    hops[i] = h;
    last[i] = prev;
}

// xlate: x: in[n * w], out: out[n * w], count: out[n], f: out[n], b: out[n], tag: out[n], w: size(1..40),
// xlate: n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void row_compact(const float* x, float* out, int* count, float* f, int* b, int* tag, int w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = 0;
        int odd = 0;
        int miss = 0;
        for (int j = 0; j < w; j++) {
            if (x[i * w + j] > 0.0f) out[i * w + k++] = x[i * w + j];
            else odd += (j & 1) ? ++miss : miss++;
        }
        count[i] = k;
        f[i] = b[i] = x[i * w] * 3.0f;
        tag[i] = (k > w / 2) ? k-- : ++k;
        tag[i] += k * 1000 + odd * 100000;
    }
}
"""


def test_assignments_and_increments_used_as_values(tmp_path):
    t = ported(ASSIGN_VALUES, "chase", "row_compact")
    m, n = 211, 333
    r = rng(5)
    nxt = np.array([k + int(r.integers(1, 6)) if k + 6 < m else -1 for k in range(m)], np.int32)
    start = r.integers(0, m, n).astype(np.int32)
    out = run(t.text, "chase", [buf("nxt", nxt), buf("start", start), buf("hops", poisoned(n, np.int32)),
                                buf("last", poisoned(n, np.int32)), ScalarArg("m", m, "int32"),
                                ScalarArg("n", n, "int32")], tmp_path)
    hops, last = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for i, v in enumerate(start):
        prev, h = v, 0
        while nxt[v] >= 0:
            v = nxt[v]
            prev, h = v, h + 1
        hops[i], last[i] = h, prev
    np.testing.assert_array_equal(out["hops"], hops)
    np.testing.assert_array_equal(out["last"], last)
    guards_intact(out, "last")

    w, n = 13, 150
    x = r.standard_normal(n * w).astype(np.float32) * 4
    args = [buf("x", x), buf("out", poisoned(n * w, np.float32)), buf("count", poisoned(n, np.int32)),
            buf("f", poisoned(n, np.float32)), buf("b", poisoned(n, np.int32)), buf("tag", poisoned(n, np.int32)),
            ScalarArg("w", w, "int32"), ScalarArg("n", n, "int32")]
    got = run(t.text, "row_compact", args, tmp_path)
    ref_out = np.full(n * w, np.nan, np.float32)
    count, tag = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for i in range(n):
        row = x[i * w:(i + 1) * w]
        pos = row[row > 0]
        ref_out[i * w:i * w + len(pos)] = pos
        k, odd, miss = len(pos), 0, 0
        for j in range(w):
            if not row[j] > 0:
                if j & 1:
                    miss += 1
                    odd += miss
                else:
                    odd += miss
                    miss += 1
        count[i] = k
        if k > w // 2:
            tag[i], k = k, k - 1
        else:
            k += 1
            tag[i] = k
        tag[i] += k * 1000 + odd * 100000
    np.testing.assert_array_equal(got["out"], ref_out)
    np.testing.assert_array_equal(got["count"], count)
    b = (x[::w] * np.float32(3)).astype(np.int32)
    np.testing.assert_array_equal(got["b"], b)
    np.testing.assert_array_equal(got["f"], b.astype(np.float32))  # f takes b's value: the int, as a float
    np.testing.assert_array_equal(got["tag"], tag)
    guards_intact(got, "out")


# -- std::numeric_limits of a template type ----------------------------------------------------------------

LIMITS = """
template <typename K>
__global__ void row_range(const K* x, const int* len, K* lo, K* hi, K* tag, int w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    K m = std::numeric_limits<K>::max();
    K M = std::numeric_limits<K>::lowest();
    for (int j = 0; j < len[i]; j++) {
        K v = x[i * w + j];
        m = v < m ? v : m;
        M = v > M ? v : M;
    }
    lo[i] = m;
    hi[i] = M;
    tag[i] = len[i] == 0 ? std::numeric_limits<K>::infinity() : std::numeric_limits<K>::epsilon();
}
void launch(const float* x, const int* len, float* lo, float* hi, float* tag, int w, int n) {
    row_range<float><<<(n + 127) / 128, 128>>>(x, len, lo, hi, tag, w, n);
}
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint32])
def test_numeric_limits_of_a_template_type_take_the_launch_dtype(dtype, tmp_path):
    t = ported(LIMITS, "row_range")
    w, n = 9, 200
    r = rng(7)
    x = (r.standard_normal(n * w) * 50).astype(dtype)
    ln = r.integers(0, w + 1, n).astype(np.int32)
    args = [buf("x", x), buf("len", ln)] + [buf(k, poisoned(n, dtype)) for k in ("lo", "hi", "tag")] + [
        ScalarArg("w", w, "int32"), ScalarArg("n", n, "int32")]
    out = run(t.text, "row_range", args, tmp_path)
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    rows = [x[i * w:i * w + ln[i]] for i in range(n)]
    lo = np.array([r_.min() if len(r_) else info.max for r_ in rows], dtype)
    hi = np.array([r_.max() if len(r_) else info.min for r_ in rows], dtype)
    if np.dtype(dtype).kind == "f":
        tag = np.where(ln == 0, np.inf, info.eps).astype(dtype)
    else:
        tag = np.zeros(n, dtype)  # C++: integers have no infinity nor epsilon (both 0)
    np.testing.assert_array_equal(out["lo"], lo)
    np.testing.assert_array_equal(out["hi"], hi)
    np.testing.assert_array_equal(out["tag"], tag)
    guards_intact(out, "tag")


def test_assignment_inside_a_condition_then_updated(tmp_path):
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void chain(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float b = 0.0f;
    if (i < n) y[i] = (b = x[i]) > 0 ? 1.0f : 0.0f;
    float c = b += 1.0f;
    if (i < n && x[i] > 0.5f) y[i] = b * 10.0f + c;
}
"""
    t = ported(src, "chain")
    n = 90
    x = rng(9).standard_normal(n).astype(np.float32)
    out = run(t.text, "chain", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    b = x + np.float32(1)
    ref = np.where(x > 0.5, b * np.float32(10) + b, np.where(x > 0, 1.0, 0.0)).astype(np.float32)
    np.testing.assert_allclose(out["y"], ref, rtol=1e-6)
    guards_intact(out, "y")


@pytest.mark.parametrize("body, what", [
    ("int k = i; y[k++] += 1.0f;", "compound assignment to a target with side effects"),
    ("float v = y[i]++; y[i] = v;", "++/-- of memory used as a value"),
])
def test_what_stays_refused(body, what):
    src = """
// xlate: x: in[n], y: inout[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    BODY
    y[i] = 1.0f;
}
""".replace("BODY", body)
    t = port(src)
    assert t.kernels == [] and what in t.blocking[0].message, [d.format() for d in t.diagnostics]


# -- addresses of locals passed to device functions ---------------------------------------------------------

OUT_PARAMS = """
__device__ void advance(unsigned int* st) { st[0] = st[0] * 1664525u + 1013904223u; }
__device__ float next_uniform(unsigned int* state) {
    advance(state);  // the address passed on
    return (float)(*state >> 8) * (1.0f / 16777216.0f);
}
__device__ void row_bounds(const float* v, int w, float* lo, float* hi) {
    *lo = v[0];
    hi[0] = v[0];
    for (int j = 1; j < w; j++) {
        if (v[j] < *lo) *lo = v[j];
        if (v[j] > hi[0]) hi[0] = v[j];
    }
}
__device__ void stretch(float2* p) { p->x -= 1.0f; p->y *= 2.0f; }

// xlate: seed: inout[n], x: in[n * w], u: out[n], r: out[n], w: size(1..20), n: size(1..3000)
// xlate: grid: cdiv(n, 128), block: 128
__global__ void out_params(unsigned int* seed, const float* x, float* u, float* r, int w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int s = seed[i];
    float a = next_uniform(&s);
    u[i] = a + 2.0f * next_uniform(&s);
    seed[i] = s;
    float lo, hi;
    row_bounds(x + i * w, w, &lo, &hi);
    float2 q = make_float2(lo, hi);
    stretch(&q);
    r[i] = q.x + 10.0f * q.y;
}
"""


def _lcg(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = (s.astype(np.uint64) * 1664525 + 1013904223) % 2**32
    return s.astype(np.uint32), (s >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)


def test_address_of_a_local_passed_to_a_pointer_parameter(tmp_path):
    t = ported(OUT_PARAMS, "out_params")
    w, n = 7, 260
    seed = rng(11).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = rng(12).standard_normal(n * w).astype(np.float32)
    out = run(t.text, "out_params", [buf("seed", seed.copy()), buf("x", x), buf("u", poisoned(n, np.float32)),
                                     buf("r", poisoned(n, np.float32)), ScalarArg("w", w, "int32"),
                                     ScalarArg("n", n, "int32")], tmp_path)
    s1, a = _lcg(seed)
    s2, b = _lcg(s1)
    np.testing.assert_array_equal(out["seed"], s2)
    np.testing.assert_allclose(out["u"], a + np.float32(2) * b, rtol=1e-6)
    rows = x.reshape(n, w)
    np.testing.assert_allclose(out["r"], (rows.min(1) - 1) + 10 * (rows.max(1) * 2), rtol=1e-6)
    guards_intact(out, "r")


def test_a_pointer_parameter_used_as_a_pointer_stays_refused():
    src = OUT_PARAMS.replace("p->y *= 2.0f;", "p->y *= 2.0f; float* f = (float*)p; f[1] += 1.0f;")
    t = port(src)
    assert t.kernels == [] and "uses 'p' as a pointer" in t.blocking[0].message, [d.format() for d in t.diagnostics]


# -- sincos and scoped atomics ------------------------------------------------------------------------------

SINCOS_SRC = """
// xlate: x: in[n], s: out[n], c: out[n], top: inout[1], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void rotate(const float* x, float* s, float* c, int* top, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a, b;
    sincosf(2.0f * x[i], &a, &b);
    float p, q;
    sincospif(x[i], &p, &q);
    sincosf(x[i], s + i, &c[i]);
    s[i] += a * 10.0f + p * 100.0f;
    c[i] += b * 10.0f + q * 100.0f;
    atomicMax_system(top, (int)(x[i] * 1000.0f));
}
"""


def test_sincos_writes_through_its_pointers_and_scoped_atomics(tmp_path):
    t = ported(SINCOS_SRC, "rotate")
    n = 333
    x = rng(13).uniform(-3, 3, n).astype(np.float32)
    out = run(t.text, "rotate", [buf("x", x), buf("s", poisoned(n, np.float32)), buf("c", poisoned(n, np.float32)),
                                 buf("top", np.full(1, -5000, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(out["s"], np.sin(xd) + 10 * np.sin(2 * xd) + 100 * np.sin(np.pi * xd), atol=2e-4)
    np.testing.assert_allclose(out["c"], np.cos(xd) + 10 * np.cos(2 * xd) + 100 * np.cos(np.pi * xd), atol=2e-4)
    assert int(out["top"][0]) == int((x * np.float32(1000)).astype(np.int32).max())
    guards_intact(out, "c")


# -- overloads picked by the arguments' types ------------------------------------------------------------------

OVERLOADS = """
template <typename T> __device__ T mix(T a, T b) { return a + b; }
__device__ float2 mix(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
template <typename T> __device__ T mix(T a, T b, T c) { return mix(mix(a, b), c) * (T)2; }
__device__ float2 mix(float2 a, float2 b, float2 c) { return mix(mix(a, b), c); }
__device__ int mix(int a, int b, int c) { return a * b * c; }

// xlate: x: in[n], k: in[n], y: out[n], z: out[n], m: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void overloads(const float* x, const int* k, float* y, float* z, int* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = mix(x[i], 1.5f, x[i]);
    float2 p = mix(make_float2(x[i], 1.0f), make_float2(2.0f, x[i]), make_float2(x[i], x[i]));
    z[i] = p.x * 10.0f + p.y;
    m[i] = mix(k[i], 3, k[i] + 1);
}
"""


def test_overloads_of_one_arity_are_picked_by_argument_types(tmp_path):
    t = ported(OVERLOADS, "overloads")
    n = 301
    x = rng(14).standard_normal(n).astype(np.float32)
    k = rng(15).integers(-50, 50, n).astype(np.int32)
    out = run(t.text, "overloads", [buf("x", x), buf("k", k), buf("y", poisoned(n, np.float32)),
                                    buf("z", poisoned(n, np.float32)), buf("m", poisoned(n, np.int32)),
                                    ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["y"], (x + np.float32(1.5) + x) * 2, rtol=1e-6)
    px, py = (x - 2) - x, (1 - x) - x
    np.testing.assert_allclose(out["z"], px * 10 + py, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["m"], k * 3 * (k + 1))
    guards_intact(out, "m")


# -- bit scans ----------------------------------------------------------------------------------------------

BITS = """
// xlate: a: in[n], b: in[n], y: out[n], z: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void scans(const int* a, const long long* b, int* y, int* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __clz(a[i]) + 100 * __ffs(a[i]);
        z[i] = __clzll(b[i]) + 100 * __ffsll(b[i]);
    }
}
"""


def _clz(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return bits - v.bit_length()


def _ffs(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return (v & -v).bit_length()


def test_leading_zeros_and_first_set_bit(tmp_path):
    t = ported(BITS, "scans")
    n = 260
    r = rng(16)
    a = (r.integers(-2**31, 2**31, n) >> r.integers(0, 32, n)).astype(np.int32)
    b = (r.integers(-2**63, 2**63 - 1, n, dtype=np.int64) >> r.integers(0, 64, n)).astype(np.int64)
    a[:3], b[:3] = [0, -1, 1], [0, -1, 1]
    out = run(t.text, "scans", [buf("a", a), buf("b", b), buf("y", poisoned(n, np.int32)),
                                buf("z", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["y"], [_clz(int(v), 32) + 100 * _ffs(int(v), 32) for v in a])
    np.testing.assert_array_equal(out["z"], [_clz(int(v), 64) + 100 * _ffs(int(v), 64) for v in b])
    guards_intact(out, "z")
