"""Vector views of scalar buffers: a pointer's address tested for alignment (`(uintptr_t)p % 16 == 0`) to choose
between a vector path and a scalar one, and a shared array of scalars read and written through a pointer to a
vector of them (`*(float4*)&s[4 * i]`). Ports run under the Triton interpreter against NumPy, at sizes that are
no multiple of the block or of the vector width (rows of odd length: some threads take the scalar path)."""

from __future__ import annotations

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

ALIGN = """
// xlate: a: in[rows * cols], c: inout[rows * cols], rows: size(1..64), cols: size(1..64), grid: cdiv(rows * (cols / 4), 32), block: 32
__global__ void axpy_rows(const float* a, float* c, int rows, int cols) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int quads = cols / 4;
    if (t >= rows * quads) return;
    int r = t / quads, q = t % quads;
    const float* src = a + r * cols + 4 * q;
    float* dst = &c[r * cols + 4 * q];
    if ((reinterpret_cast<uintptr_t>(src) & 15) == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
        float4 x = *reinterpret_cast<const float4*>(src);
        float4 y = *reinterpret_cast<float4*>(dst);
        y.x += 2.0f * x.x;
        y.y += 2.0f * x.y;
        y.z += 2.0f * x.z;
        y.w += 2.0f * x.w;
        *reinterpret_cast<float4*>(dst) = y;
    } else {
        for (int k = 0; k < 4; ++k) dst[k] += 2.0f * src[k];
    }
}

// xlate: a: in[n], flag: out[n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void aligned_flags(const short* a, int* flag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t addr = (size_t)(a + i);
    flag[i] = (addr % 8 == 0 ? 1 : 0) + ((addr & 3) == 0 ? 2 : 0) + (int)a[i] * 4;
}
"""


def test_alignment_test_picks_vector_or_scalar_path(tmp_path):
    t = ported(ALIGN, "axpy_rows", "aligned_flags")
    for rows, cols in ((37, 13), (5, 8), (11, 30)):  # cols odd: rows start at every residue of the vector width
        a = rng(rows).standard_normal(rows * cols).astype(np.float32)
        c = rng(cols).standard_normal(rows * cols).astype(np.float32)
        out = run(t.text, "axpy_rows", [buf("a", a), buf("c", c.copy()), ScalarArg("rows", rows, "int32"),
                                        ScalarArg("cols", cols, "int32")], tmp_path)
        want = c.reshape(rows, cols).copy()
        q = cols // 4 * 4
        want[:, :q] += np.float32(2) * a.reshape(rows, cols)[:, :q]
        np.testing.assert_allclose(out["c"], want.reshape(-1), rtol=1e-6)
        guards_intact(out, "c")
    n = 301
    a = rng(5).integers(-100, 100, n).astype(np.int16)
    out = run(t.text, "aligned_flags", [buf("a", a), buf("flag", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    off = np.arange(n) * 2  # the byte offset of a[i] in a buffer cudaMalloc aligned
    np.testing.assert_array_equal(out["flag"], (off % 8 == 0) * 1 + (off % 4 == 0) * 2 + a.astype(np.int32) * 4)


@pytest.mark.parametrize("use", ["(uintptr_t)p % 3 == 0", "(uintptr_t)p > 64", "((uintptr_t)p & 1023) == 0"])
def test_address_used_as_a_number_is_refused(use):
    src = f"""
// xlate: a: in[n], b: out[n], n: size(1..256), grid: cdiv(n, 64), block: 64
__global__ void k(const float* a, float* b, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = a + i;
    if (i < n) b[i] = ({use}) ? 1.0f : 0.0f;
}}
"""
    t = port(src)
    assert t.kernels == []
    assert any("address used other than in an alignment test" in d.message for d in t.diagnostics), [
        d.format() for d in t.diagnostics]


SHARED = """
// xlate: a: in[n], out: out[n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void quad_sums(const float* a, float* out, int n) {
    __shared__ float s[64];
    __shared__ float w[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (t < 16) {
        float4 q = *reinterpret_cast<const float4*>(&s[4 * t]);
        float total = q.x + q.y + q.z + q.w;
        *reinterpret_cast<float4*>(w + 4 * t) = make_float4(total, q.x, q.y * 2.0f, -q.w);
    }
    __syncthreads();
    if (i < n) out[i] = w[t] + s[t];
}
"""


def test_shared_array_through_vector_pointer(tmp_path):
    t = ported(SHARED, "quad_sums")
    n = 203
    a = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "quad_sums", [buf("a", a), buf("out", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    pad = np.zeros(-n % 64, np.float32)
    q = np.concatenate([a, pad]).reshape(-1, 4)
    w = np.stack([q.sum(axis=1, dtype=np.float32), q[:, 0], q[:, 1] * 2, -q[:, 3]], axis=1).reshape(-1)
    np.testing.assert_allclose(out["out"], (w + np.concatenate([a, pad]))[:n], rtol=1e-5, atol=1e-6)
    guards_intact(out, "out")


PACKED = """
// xlate: a: in[rows * cols], c: inout[rows * cols], rows: size(1..48), cols: size(1..80), grid: cdiv(rows * (cols / 8), 32), block: 32
__global__ void half_axpy_rows(const __half* a, __half* c, int rows, int cols) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int octs = cols / 8;
    if (t >= rows * octs) return;
    int r = t / octs, q = t % octs;
    const __half* src = a + r * cols + 8 * q;
    __half* dst = c + r * cols + 8 * q;
    if (reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
        uint4 x = *reinterpret_cast<const uint4*>(src);
        uint4 y = *reinterpret_cast<const uint4*>(dst);
        const __half* xs = reinterpret_cast<const __half*>(&x);
        __half* ys = reinterpret_cast<__half*>(&y);
        for (int k = 0; k < 8; ++k) ys[k] = ys[k] + xs[k] * __float2half(0.5f);
        *reinterpret_cast<uint4*>(dst) = y;
    } else {
        for (int k = 0; k < 8; ++k) dst[k] = dst[k] + src[k] * __float2half(0.5f);
    }
}

// xlate: a: in[n], b: in[n], c: out[n], n: size(1..2048), grid: cdiv(n, 512), block: 64
__global__ void mix_halves(const __half* a, const __half* b, __half* c, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (base + 8 > n) {
        for (int i = base; i < n; ++i) c[i] = a[i] - b[i];
        return;
    }
    float4 va = *reinterpret_cast<const float4*>(a + base);
    float4 vb = *reinterpret_cast<const float4*>(b + base);
    float4 vc;
    __half2 lo = *reinterpret_cast<const __half2*>(&va.y);
    __half2 hi = *reinterpret_cast<const __half2*>(&vb.w);
    __half2 s;
    s.x = lo.x + hi.y;
    s.y = lo.y * hi.x;
    *reinterpret_cast<__half2*>(&vc.x) = s;
    const __half* ha = reinterpret_cast<const __half*>(&va);
    const __half* hb = reinterpret_cast<const __half*>(&vb);
    __half* hc = reinterpret_cast<__half*>(&vc) + 2;
    for (int k = 0; k < 6; ++k) hc[k] = ha[k + 2] - hb[k + 2];
    *reinterpret_cast<float4*>(c + base) = vc;
}
"""


def test_packed_vectors_of_halves(tmp_path):
    t = ported(PACKED, "half_axpy_rows", "mix_halves")
    assert "tl.arange(0, 8)" in t.text  # eight halves a thread, one contiguous block
    half = np.float16
    for rows, cols in ((13, 43), (6, 16)):
        a = rng(rows).standard_normal(rows * cols).astype(half)
        c = rng(cols).standard_normal(rows * cols).astype(half)
        out = run(t.text, "half_axpy_rows", [buf("a", a), buf("c", c.copy()), ScalarArg("rows", rows, "int32"),
                                             ScalarArg("cols", cols, "int32")], tmp_path)
        want = c.reshape(rows, cols).copy()
        q = cols // 8 * 8
        want[:, :q] = want[:, :q] + a.reshape(rows, cols)[:, :q] * half(0.5)
        np.testing.assert_allclose(out["c"].astype(np.float32), want.reshape(-1).astype(np.float32), rtol=2e-3,
                                   atol=2e-3)
        guards_intact(out, "c")
    n = 203
    a, b = (rng(s).standard_normal(n).astype(half) for s in (8, 9))
    out = run(t.text, "mix_halves", [buf("a", a), buf("b", b), buf("c", poisoned(n, half)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = a - b
    full = n // 8 * 8
    ga, gb = a[:full].reshape(-1, 8), b[:full].reshape(-1, 8)
    w = want[:full].reshape(-1, 8)
    w[:, 0] = ga[:, 2] + gb[:, 7]
    w[:, 1] = ga[:, 3] * gb[:, 6]
    np.testing.assert_allclose(out["c"].astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    guards_intact(out, "c")


def test_packed_vector_member_as_a_number_is_refused():
    src = """
// xlate: a: in[8 * n], b: out[n], n: size(1..256), grid: cdiv(n, 64), block: 64
__global__ void k(const __half* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = reinterpret_cast<const float4*>(a)[i]; b[i] = v.x; }
}
"""
    t = port(src)
    assert t.kernels == []
    assert any("member .x of a float4 holding 8 packed __halfs" in d.message for d in t.diagnostics), [
        d.format() for d in t.diagnostics]


STAGED = """
// xlate: w: in[m + 3], x: in[rows * m], y: out[rows * m], rows: size(1..40), m: size(1..300), off: size(0..3), grid: cdiv(rows * m, 64), block: 64, shmem: 4 * m
__global__ void staged_weights(const float* w, const float* x, float* y, int rows, int m, int off) {
    extern __shared__ float sw[];
    int quads = m / 4;
    for (int q = threadIdx.x; q < quads; q += blockDim.x) {
        const float* src = w + off + 4 * q;
        float* dst = &sw[4 * q];
        if (reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
            float4 v = *reinterpret_cast<const float4*>(src);
            *reinterpret_cast<float4*>(dst) = v;
        } else {
            for (int j = 0; j < 4; ++j) sw[4 * q + j] = w[off + 4 * q + j];
        }
    }
    for (int t = threadIdx.x; t < m - 4 * quads; t += blockDim.x) sw[4 * quads + t] = -w[off + 4 * quads + t];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * m) y[i] = x[i] * sw[i % m];
}

// xlate: w: in[m + 7], y: out[n], n: size(1..2000), m: size(1..300), off: size(0..7), grid: cdiv(n, 64), block: 64, shmem: 2 * m
__global__ void staged_halves(const __half* w, __half* y, int n, int m, int off) {
    extern __shared__ __half sh[];
    int octs = m / 8;
    for (int q = threadIdx.x; q < octs; q += blockDim.x) {
        const __half* src = &w[off + 8 * q];
        if (((size_t)src & 15) == 0) {
            uint4 bits = *reinterpret_cast<const uint4*>(src);
            *reinterpret_cast<uint4*>(sh + 8 * q) = bits;
        } else {
            for (int j = 0; j < 8; ++j) sh[8 * q + j] = src[j];
        }
    }
    for (int t = threadIdx.x; t < m % 8; t += blockDim.x) sh[8 * octs + t] = w[off + 8 * octs + t];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sh[(7 * i) % m];
}
"""


def test_staging_loop_with_vector_and_scalar_paths(tmp_path):
    t = ported(STAGED, "staged_weights", "staged_halves")
    for rows, m, off in ((7, 45, 0), (3, 130, 3), (5, 3, 1)):
        w = rng(m).standard_normal(m + 3).astype(np.float32)
        x = rng(rows).standard_normal(rows * m).astype(np.float32)
        out = run(t.text, "staged_weights", [buf("w", w), buf("x", x), buf("y", poisoned(rows * m, np.float32)),
                                             ScalarArg("rows", rows, "int32"), ScalarArg("m", m, "int32"),
                                             ScalarArg("off", off, "int32")], tmp_path)
        sw = w[off : off + m].copy()
        sw[m // 4 * 4 :] *= -1
        np.testing.assert_array_equal(out["y"], x * np.tile(sw, rows))
        guards_intact(out, "y")
    for n, m, off in ((300, 77, 0), (129, 40, 5)):
        w = rng(n).standard_normal(m + 7).astype(np.float16)
        out = run(t.text, "staged_halves", [buf("w", w), buf("y", poisoned(n, np.float16)), ScalarArg("n", n, "int32"),
                                            ScalarArg("m", m, "int32"), ScalarArg("off", off, "int32")], tmp_path)
        np.testing.assert_array_equal(out["y"], w[off : off + m][(7 * np.arange(n)) % m])


PAIRED = """
// xlate: a: in[n], b: in[n], c: out[n], n: size(1..3000), grid: cdiv(n, 256), block: 32
__global__ void paired_halves(const __half* a, const __half* b, __half* c, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (n - first < 8) {
        for (int i = first; i < n; ++i) c[i] = a[i] * b[i];
        return;
    }
    float4 va = *reinterpret_cast<const float4*>(a + first);
    float4 vb = *reinterpret_cast<const float4*>(b + first);
    float4 vc;
    *reinterpret_cast<__half2*>(&vc.x) = __hmul2(*reinterpret_cast<__half2*>(&va.x), *reinterpret_cast<__half2*>(&vb.x));
    *reinterpret_cast<__half2*>(&vc.y) = __hadd2(*reinterpret_cast<__half2*>(&va.y), *reinterpret_cast<__half2*>(&vb.y));
    *reinterpret_cast<__half2*>(&vc.z) = __hmul2(*reinterpret_cast<__half2*>(&va.z), *reinterpret_cast<__half2*>(&vb.z));
    *reinterpret_cast<__half2*>(&vc.w) = __hadd2(*reinterpret_cast<__half2*>(&va.w), *reinterpret_cast<__half2*>(&vb.w));
    *reinterpret_cast<float4*>(c + first) = vc;
}
"""


def test_paired_half_intrinsics_on_packed_lanes(tmp_path):
    t = ported(PAIRED, "paired_halves")
    n = 1001
    a, b = (rng(s).standard_normal(n).astype(np.float16) for s in (11, 12))
    out = run(t.text, "paired_halves", [buf("a", a), buf("b", b), buf("c", poisoned(n, np.float16)),
                                        ScalarArg("n", n, "int32")], tmp_path)
    want = a * b
    full = n // 8 * 8
    lanes = np.arange(full) % 8
    added = (lanes == 2) | (lanes == 3) | (lanes == 6) | (lanes == 7)
    want[:full][added] = a[:full][added] + b[:full][added]
    np.testing.assert_array_equal(out["c"], want)
    guards_intact(out, "c")


LOCAL_ROWS = """
// xlate: a: in[n], b: out[n], n: size(1..3000), grid: cdiv(n, 16 * 32), block: 32
__global__ void rows_of_halves(const __half* a, __half* b, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    if (first + 16 > n) {
        for (int i = first; i < n; ++i) b[i] = -a[i];
        return;
    }
    __half frag[2][8];
    int words[4];
    for (int r = 0; r < 2; ++r)
        *reinterpret_cast<uint4*>(frag[r]) = *reinterpret_cast<const uint4*>(a + first + 8 * r);
    reinterpret_cast<int4*>(words)[0] = make_int4(1, 2, 3, 4);
    const __half2* lo = reinterpret_cast<const __half2*>(frag[0]);
    __half2* hi = reinterpret_cast<__half2*>(frag[1]);
    for (int k = 0; k < 4; ++k) hi[k] = __hadd2(hi[k], lo[3 - k]);
    frag[0][words[2]] = frag[0][words[0]] * __float2half(2.0f);
    for (int r = 0; r < 2; ++r)
        *reinterpret_cast<uint4*>(b + first + 8 * r) = *reinterpret_cast<const uint4*>(frag[r]);
}
"""


def test_local_arrays_through_vector_pointers(tmp_path):
    t = ported(LOCAL_ROWS, "rows_of_halves")
    n = 1000
    a = rng(13).standard_normal(n).astype(np.float16)
    out = run(t.text, "rows_of_halves", [buf("a", a), buf("b", poisoned(n, np.float16)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = -a
    full = n // 16 * 16
    g = a[:full].reshape(-1, 2, 4, 2).copy()  # [group, row, pair, lane]
    g[:, 1] = g[:, 1] + g[:, 0, ::-1]
    flat = g.reshape(-1, 16)
    flat[:, 3] = flat[:, 1] * np.float16(2)
    want[:full] = flat.reshape(-1)
    np.testing.assert_array_equal(out["b"], want)
    guards_intact(out, "b")


def test_reinterpretation_of_a_template_typed_buffer_rescales_by_its_dtype(tmp_path):
    src = """
// xlate: a: in[2 * n], b: out[n], n: size(1..256), T: float16, grid: cdiv(n, 64), block: 64
template <typename T>
__global__ void k(const T* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = reinterpret_cast<const float*>(a)[i];
}
"""
    t = ported(src, "k")  # the offset in T's size (its constexpr dtype's), the port generic in T
    n = 201
    a = rng(14).standard_normal(2 * n).astype(np.float16)
    out = run(t.text, "k", [buf("a", a), buf("b", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["b"].view(np.uint32), a.view(np.uint32))
    guards_intact(out, "b")


def test_staging_body_that_reads_shared_memory_is_not_staged():
    src = """
// xlate: a: in[n], b: out[n], n: size(1..256), grid: cdiv(n, 64), block: 64
__global__ void k(const float* a, float* b, int n) {
    __shared__ float s[128];
    for (int q = threadIdx.x; q < 64; q += blockDim.x) {
        s[2 * q] = a[q % n];
        s[2 * q + 1] = s[2 * q] + 1.0f;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = s[(2 * i + 1) % 128];
}
"""
    t = port(src)
    assert not any("elements an iteration" in d.message for d in t.diagnostics), [d.format() for d in t.diagnostics]
