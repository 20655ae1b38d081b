"""Atomics on shared memory at an element computed from the thread index alone (`atomicAdd(&bins[threadIdx.x %
8], v)`, `atomicAdd(bins + warp, 1)`, a template-typed index): each element some thread names gets its value
before plus the block reduction of the operands of the threads naming it, which any order of the atomics leaves.
A data-dependent element (a block-local histogram of the values) takes each element of a small array in turn. Ports run under the Triton interpreter
against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: x: in[n], out: out[8 * cdiv(n, 128)], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void lane_bins(const float* x, float* out, int n) {
    __shared__ float bins[8];
    int i = blockIdx.x * 128 + threadIdx.x;
    if (threadIdx.x < 8) bins[threadIdx.x] = 0.5f;
    __syncthreads();
    if (i < n) atomicAdd(&bins[threadIdx.x % 8], x[i] * x[i]);
    __syncthreads();
    if (threadIdx.x < 8) out[blockIdx.x * 8 + threadIdx.x] = bins[threadIdx.x];
}

// xlate: x: in[n], out: out[4 * cdiv(n, 128)], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void positives_per_warp(const int* x, int* out, int n) {
    __shared__ int counts[4];
    int i = blockIdx.x * 128 + threadIdx.x;
    if (threadIdx.x < 4) counts[threadIdx.x] = 0;
    __syncthreads();
    if (i < n && x[i] > 0) atomicAdd(counts + (threadIdx.x >> 5), 1);
    __syncthreads();
    if (threadIdx.x < 4) out[blockIdx.x * 4 + threadIdx.x] = counts[threadIdx.x];
}

template <typename I>
__global__ void typed_bins(const float* x, float* out, I n) {
    __shared__ float acc[4];
    I t = (I)(threadIdx.x % 4);
    I i = (I)blockIdx.x * 64 + (I)threadIdx.x;
    if (threadIdx.x < 4) acc[threadIdx.x] = 0.0f;
    __syncthreads();
    if (i < n) atomicAdd(acc + t, x[i]);
    __syncthreads();
    if (threadIdx.x < 4) atomicAdd(out + threadIdx.x, acc[threadIdx.x]);
}

// xlate: x: in[n](0..100), out: inout[8](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void value_histogram(const int* x, int* out, int n) {
    __shared__ int hist[8];
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x < 8) hist[threadIdx.x] = 0;
    __syncthreads();
    if (i < n) atomicAdd(&hist[x[i] & 7], 1);
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(out + threadIdx.x, hist[threadIdx.x]);
}
"""

TYPED_SPEC = "// xlate: x: in[n], out: inout[4](0..0), n: size(1..5000), I: int32, grid: cdiv(n, 64), block: 64\n"


def test_shared_atomics_at_thread_computed_elements(tmp_path):
    t = port(SRC.replace("template <typename I>\n", TYPED_SPEC + "template <typename I>\n"))
    assert t.kernels == ["lane_bins", "positives_per_warp", "typed_bins", "value_histogram"], \
        [d.format() for d in t.diagnostics]

    n = 1001
    blocks = -(-n // 128)
    x = rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "lane_bins", [buf("x", x), buf("out", poisoned(8 * blocks, np.float32)),
                                    ScalarArg("n", n, "int32")], tmp_path)
    sq = np.zeros(blocks * 128)
    sq[:n] = x.astype(np.float64) ** 2
    want = 0.5 + sq.reshape(blocks, 16, 8).sum(axis=1)  # thread t of a block adds to bin t % 8
    np.testing.assert_allclose(out["out"], want.ravel(), rtol=1e-5)
    guards_intact(out, "out")

    xi = rng(2).integers(-5, 6, n).astype(np.int32)
    out = run(t.text, "positives_per_warp", [buf("x", xi), buf("out", poisoned(4 * blocks, np.int32)),
                                             ScalarArg("n", n, "int32")], tmp_path)
    pos = np.zeros(blocks * 128, np.int32)
    pos[:n] = xi > 0
    assert np.array_equal(out["out"], pos.reshape(blocks, 4, 32).sum(axis=2).ravel())
    guards_intact(out, "out")

    n = 777
    x = rng(3).standard_normal(n).astype(np.float32)
    out = run(t.text, "typed_bins", [buf("x", x), buf("out", np.zeros(4, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = np.array([x[k::4].astype(np.float64).sum() for k in range(4)])  # 64 is a multiple of 4
    np.testing.assert_allclose(out["out"], want, rtol=1e-4, atol=1e-5)
    guards_intact(out, "out")

    n = 1500  # a block-local histogram of the data: each of the 8 bins counts its block's threads
    xi = rng(4).integers(0, 101, n).astype(np.int32)
    out = run(t.text, "value_histogram", [buf("x", xi), buf("out", np.zeros(8, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    assert np.array_equal(out["out"], np.bincount(xi & 7, minlength=8))
    guards_intact(out, "out")


ADDRESS_SRC = """
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void two_halves(const float* x, float* y, int n) {
    __shared__ float s[256];
    float* hi = &s[128];  // the address of an element: the array from there on
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] : 0.0f;
    hi[t] = i < n ? 2.0f * x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[127 - t] + hi[t] + s[128 + (t ^ 1)];
}
"""


def test_address_of_a_shared_element_is_a_pointer_into_the_array(tmp_path):
    t = port(ADDRESS_SRC)
    assert t.kernels == ["two_halves"], [d.format() for d in t.diagnostics]
    n = 1000
    x = rng(4).standard_normal(n).astype(np.float32)
    out = run(t.text, "two_halves", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    blocks = -(-n // 128)
    xp = np.zeros(blocks * 128)
    xp[:n] = x
    xb = xp.reshape(blocks, 128)
    tt = np.arange(128)
    want = (xb[:, 127 - tt] + 2 * xb + 2 * xb[:, tt ^ 1]).ravel()[:n]
    np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-6)
    guards_intact(out, "y")


SAME_VALUE_SRC = """
// xlate: x: in[n * 128], bias: in[n * 32], y: out[n * 128], n: size(1..40), grid: n, block: (32, 4)
__global__ void row_bias(const float* x, const float* bias, float* y, int n) {
    __shared__ float b[32];
    b[threadIdx.x] = bias[blockIdx.x * 32 + threadIdx.x];  // the 4 rows store the same values
    __syncthreads();
    int i = blockIdx.x * 128 + threadIdx.y * 32 + threadIdx.x;
    y[i] = x[i] + b[(threadIdx.x + threadIdx.y) % 32];
}

// xlate: x: in[n * 128], y: out[n * 128], n: size(1..40), grid: n, block: (32, 4)
__global__ void racy_rows(const float* x, float* y, int n) {
    __shared__ float b[32];
    int i = blockIdx.x * 128 + threadIdx.y * 32 + threadIdx.x;
    b[threadIdx.x] = x[i];  // the rows store different values: which one stays is a race
    __syncthreads();
    y[i] = b[threadIdx.x];
}
"""


def test_threads_storing_the_same_value_to_one_element(tmp_path):
    t = port(SAME_VALUE_SRC)
    assert t.kernels == ["row_bias"], [d.format() for d in t.diagnostics]
    assert [d.code for d in t.blocking] == ["XL2009"]
    n = 7
    x = rng(5).standard_normal(n * 128).astype(np.float32)
    bias = rng(6).standard_normal(n * 32).astype(np.float32)
    out = run(t.text, "row_bias", [buf("x", x), buf("bias", bias), buf("y", poisoned(n * 128, np.float32)),
                                   ScalarArg("n", n, "int32")], tmp_path)
    tx, ty = np.arange(128) % 32, np.arange(128) // 32
    want = x.reshape(n, 128) + bias.reshape(n, 32)[:, (tx + ty) % 32]
    np.testing.assert_array_equal(out["y"], want.ravel())
    guards_intact(out, "y")
