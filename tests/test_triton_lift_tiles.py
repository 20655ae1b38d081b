"""Tiles in shared memory indexed by the thread's number in a 2-D block (`s[ty * W + tx]`, or a padded row pitch
`s[ty * P + tx]`, P > W): a read of another thread's element is forwarded to the one writer the mixed-radix index
names. Sub-arrays carved from one dynamic buffer by pointer offsets do not alias: a write whose elements no
thread reads is no part of the read (not a race, not a combined value). A thread that accumulates into its own
element (`acc[me] += ...`) stores a plain value. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

# W = 12 threads along x (padded to 16 lanes), 3 rows: 36 threads, the grid one block per row of 36
TILES = """
#define W 12
#define H 3
#define P 13
// xlate: a: in[n * 36], w: in[144], out: out[n * 36], n: size(1..40), grid: n, block: (12, 3), shmem: 4 * 520
__global__ void tile_mix(const float* a, const float* w, float* out, int n) {
    extern __shared__ float pool[];
    float* rows = pool;
    float* wt = rows + W * H;
    float* acc = wt + W * W;
    float* pad = acc + W * H;
    int tx = threadIdx.x, ty = threadIdx.y, me = ty * W + tx;
    rows[me] = a[blockIdx.x * W * H + me];
    for (int i = 0; i < 5; i++) {
        int e = me + W * H * i;
        if (e < W * W) wt[e] = w[e];
    }
    acc[me] = 0.0f;
    pad[ty * P + tx] = 2.0f * a[blockIdx.x * W * H + me];
    __syncthreads();
    for (int p = 0; p < W; p++)
        acc[me] += rows[ty * W + p] * wt[p * W + tx];
    __syncthreads();
    float other = pad[((ty + 1) % H) * P + (W - 1 - tx)];
    out[blockIdx.x * W * H + me] = acc[me] + other;
}
"""


def test_linear_thread_tiles_forward(tmp_path):
    t = port(TILES)
    assert t.kernels == ["tile_mix"], [d.format() for d in t.diagnostics]
    n = 7
    a = rng(21).standard_normal(n * 36).astype(np.float32)
    w = rng(22).standard_normal(144).astype(np.float32)
    out = run(t.text, "tile_mix",
              [buf("a", a), buf("w", w), buf("out", poisoned(n * 36, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    r = a.astype(np.float64).reshape(n, 3, 12)
    acc = r @ w.astype(np.float64).reshape(12, 12)
    other = 2 * r[:, [1, 2, 0], ::-1]
    np.testing.assert_allclose(out["out"], (acc + other).ravel(), rtol=1e-5, atol=1e-5)
    guards_intact(out, "out")


RACY = """
// xlate: a: in[n * 32], out: out[n * 32], n: size(1..40), grid: n, block: (16, 2), shmem: 4 * 64
__global__ void no_barrier(const float* a, float* out, int n) {
    extern __shared__ float pool[];
    int me = threadIdx.y * 16 + threadIdx.x;
    pool[me] = a[blockIdx.x * 32 + me];
    out[blockIdx.x * 32 + me] = pool[31 - me];
}
"""


def test_linear_thread_tile_without_barrier_refused():
    t = port(RACY)
    assert t.kernels == []
    assert any(d.code == "XL2009" for d in t.diagnostics), [d.format() for d in t.diagnostics]


# a (5, 6) block, padded to 8 x 8 lanes, its tile column-major (the inner axis is y); the first stage combines
# other threads' elements per case (one case leaves by a break in its middle), the second stores those
# combinations back and reads them at an index of a run-time value
STAGES = """
// xlate: x: in[n * 30], bias: in[n], y: out[n * 30], n: size(1..40), grid: n, block: (5, 6)
__global__ void two_stage(const float* x, const float* bias, float* y, int n) {
    __shared__ float t[30];
    __shared__ float b;
    int c = threadIdx.x, r = threadIdx.y, me = c * 6 + r;
    t[me] = x[blockIdx.x * 30 + me];
    b = bias[blockIdx.x];
    __syncthreads();
    float v = 0.0f;
    switch (c) {
        case 0: v = t[r] + t[6 + r]; break;
        case 1: v = t[6 + r] - 2.0f * t[12 + r]; break;
        case 2:
            if (r == 5) break;
            v = t[12 + r] * t[18 + r + 1];
            break;
        default: v = t[24 + r];
    }
    __syncthreads();
    t[me] = v + t[me];
    __syncthreads();
    int k = (r + n) % 5;
    y[blockIdx.x * 30 + me] = t[k * 6 + (5 - r)] + b;
}
"""


def test_stored_combinations_read_back(tmp_path):
    t = port(STAGES)
    assert t.kernels == ["two_stage"], [d.format() for d in t.diagnostics]
    n = 9
    x = rng(23).standard_normal(n * 30).astype(np.float32)
    bias = rng(24).standard_normal(n).astype(np.float32)
    out = run(t.text, "two_stage",
              [buf("x", x), buf("bias", bias), buf("y", poisoned(n * 30, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    T = x.reshape(n, 5, 6)
    v = np.zeros_like(T)
    v[:, 0] = T[:, 0] + T[:, 1]
    v[:, 1] = T[:, 1] - 2 * T[:, 2]
    v[:, 2, :5] = T[:, 2, :5] * T[:, 3, 1:]
    v[:, 3:] = T[:, 4:5]
    t2 = v + T
    want = np.empty_like(T)
    for r in range(6):
        want[:, :, r] = t2[:, (r + n) % 5, 5 - r][:, None] + bias[:, None]
    np.testing.assert_allclose(out["y"], want.ravel(), rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


# 8 x 48 unrolled links of one accumulation, each reading another thread's element: the emitted chain is named
# every few links (Python's stack and its parser nest no deeper)
CHAIN = """
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: cdiv(n, 48), block: 48
__global__ void long_chain(const float* x, float* y, int n) {
    __shared__ float s[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        for (int p = 0; p < 48; p++)
            acc = acc * 0.75f + s[(threadIdx.x + k + p) % 48];
    if (i < n) y[i] = acc;
}
"""


def test_long_unrolled_chain(tmp_path):
    t = port(CHAIN)
    assert t.kernels == ["long_chain"], [d.format() for d in t.diagnostics]
    n = 301
    x = rng(25).standard_normal(n).astype(np.float32)
    out = run(t.text, "long_chain", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    s = np.zeros(7 * 48)
    s[:n] = x
    s = s.reshape(7, 48)
    acc = np.zeros((7, 48))
    lane = np.arange(48)
    for k in range(8):
        for p in range(48):
            acc = acc * 0.75 + s[:, (lane + k + p) % 48]
    np.testing.assert_allclose(out["y"], acc.ravel()[:n], rtol=1e-4, atol=1e-5)
    guards_intact(out, "y")


# a 3-D block (4, 3, 2): the thread's number z * 12 + y * 4 + x is affine in the lanes (the y lanes hold y and z,
# split by division and remainder, which recombine); an and-tree over it, and a read of another thread's element
CUBE = """
// xlate: x: in[n], y: out[n], flag: out[n], n: size(1..5000), grid: cdiv(n, 24), block: (4, 3, 2)
__global__ void cube(const float* x, float* y, int* flag, int n) {
    __shared__ float s[24];
    __shared__ int ok[32];
    int t = threadIdx.z * 12 + threadIdx.y * 4 + threadIdx.x;
    int i = blockIdx.x * 24 + t;
    s[t] = i < n ? x[i] : 0.0f;
    ok[t] = i < n ? (x[i] > -1.0f) : 1;
    if (t < 8) ok[t + 24] = 1;
    __syncthreads();
    for (int h = 16; h > 0; h /= 2) {
        if (t < h) {
            bool a = ok[t];
            bool b = ok[t + h];
            ok[t] = (a && b) ? 1 : 0;
        }
        __syncthreads();
    }
    if (i < n) y[i] = s[23 - t];
    if (i < n) flag[i] = ok[0];
}
"""


def test_thread_number_of_a_3d_block(tmp_path):
    t = port(CUBE)
    assert t.kernels == ["cube"], [d.format() for d in t.diagnostics]
    n = 203
    blocks = (n + 23) // 24
    x = rng(26).standard_normal(n).astype(np.float32) * 0.6
    out = run(t.text, "cube", [buf("x", x), buf("y", poisoned(n, np.float32)),
                               buf("flag", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    padded = np.zeros(blocks * 24, dtype=np.float32)
    padded[:n] = x
    tiles = padded.reshape(blocks, 24)
    np.testing.assert_array_equal(out["y"], tiles[:, ::-1].ravel()[:n])
    valid = (np.arange(blocks * 24) < n).reshape(blocks, 24)
    want = np.all((tiles > -1.0) | ~valid, axis=1).astype(np.int32)
    np.testing.assert_array_equal(out["flag"], np.repeat(want, 24)[:n])
    assert 0 < want.sum() < blocks  # both outcomes occur
    guards_intact(out, "y")
    guards_intact(out, "flag")


# a tile with a one-element halo, row pitch BX + 2: the halo rows are stored by the threads of row 0, the halo
# columns by those of row 1, whose second store's index was advanced under the store's own condition
HALO = """
#define BX 8
#define BY 3
// xlate: a: in[h * w], o: out[h * w], w: size(1..100), h: size(1..100), grid: (cdiv(w, 8), cdiv(h, 3)), block: (8, 3)
__global__ void halo_avg(const float* a, float* o, int w, int h) {
    __shared__ float t[(BX + 2) * (BY + 2)];
    int bx0 = blockIdx.x * BX, by0 = blockIdx.y * BY;
    int ix = bx0 + threadIdx.x, iy = by0 + threadIdx.y;
    int cx = min(ix, w - 1), cy = min(iy, h - 1);
    int me = threadIdx.x + 1 + (threadIdx.y + 1) * (BX + 2);
    t[me] = a[cy * w + cx];
    if (threadIdx.y == 0) {
        int k = threadIdx.x + 1;
        t[k] = a[max(by0 - 1, 0) * w + cx];
        t[k + (BY + 1) * (BX + 2)] = a[min(by0 + BY, h - 1) * w + cx];
    } else if (threadIdx.y == 1) {
        int k = (threadIdx.x + 1) * (BX + 2);
        int yy = min(by0 + (int)threadIdx.x, h - 1);
        if (threadIdx.x < BY) {
            t[k] = a[yy * w + max(bx0 - 1, 0)];
            k += BX + 1;
            t[k] = a[yy * w + min(bx0 + BX, w - 1)];
        }
    }
    __syncthreads();
    if (ix < w && iy < h)
        o[iy * w + ix] = 0.25f * (t[me - 1] + t[me + 1] + t[me - BX - 2] + t[me + BX + 2]);
}
"""


def test_halo_tile_with_row_pitch(tmp_path):
    t = port(HALO)
    assert t.kernels == ["halo_avg"], [d.format() for d in t.diagnostics]
    h, w = 13, 29
    a = rng(27).standard_normal(h * w).astype(np.float32)
    out = run(t.text, "halo_avg", [buf("a", a), buf("o", poisoned(h * w, np.float32)), ScalarArg("w", w, "int32"),
                                   ScalarArg("h", h, "int32")], tmp_path)
    p = np.pad(a.reshape(h, w), 1, mode="edge")
    want = 0.25 * (p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1])
    np.testing.assert_allclose(out["o"], want.ravel(), rtol=1e-5, atol=1e-6)
    guards_intact(out, "o")
