"""Warp-level and shared-memory forms of real CUDA code that the CUDA -> Triton lifter ports: reductions over
part of the block (a shuffle butterfly over 8 lanes, `cg::reduce` over a warp tile of a larger block, under a
per-warp `return`), shuffles that read one lane's value (a broadcast), dynamic shared memory given its type by a
cast of the raw byte array, null-pointer tests of buffers, and the cache-hinted loads and stores (`__ldcs`,
`__stcs`).

Every port runs under the Triton interpreter against a NumPy reference of the CUDA semantics (written here from
the CUDA programming guide's definitions: `__shfl_xor_sync` exchanges with lane ^ mask inside the width, and so
on), with poisoned outputs and guard bands. What cannot be ported faithfully stays 'not translated'."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SEGMENTS = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void octet_sums(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int m = 1; m < 8; m *= 2)
        v += __shfl_xor_sync(0xffffffff, v, m);
    if (i < n) y[i] = v;
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void lane0_broadcast(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[min(i, n - 1)] * 2.0f;
    float w = __shfl_sync(0xffffffff, v, 3, 16);
    if (i < n) y[i] = w;
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void ragged_shuffle(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[min(i, n - 1)];
    if (i < n) v += __shfl_down_sync(0xffffffff, v, 1);  // a warp cut by `i < n`: lane 31 may read an absent lane
    if (i < n) y[i] = v;
}
"""


def _octets(x: np.ndarray, block: int) -> np.ndarray:
    n = len(x)
    pad = np.zeros(-(-n // block) * block, dtype=np.int64)
    pad[:n] = x
    sums = pad.reshape(-1, 8).sum(axis=1)
    return np.repeat(sums, 8)[:n].astype(np.int32)


def test_partial_butterfly_and_lane_broadcast(tmp_path):
    t = port(SEGMENTS)
    assert t.kernels == ["octet_sums", "lane0_broadcast"], [d.format() for d in t.diagnostics]
    assert [(d.kernel, d.code) for d in t.blocking] == [("ragged_shuffle", "XL2003")]
    n = 1000
    x = rng(3).integers(-1000, 1000, n).astype(np.int32)
    out = run(
        t.text,
        "octet_sums",
        [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    assert np.array_equal(out["y"], _octets(x, 128))
    guards_intact(out, "y")
    xf = rng(4).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "lane0_broadcast",
        [buf("x", xf), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    i = np.arange(n)
    src = np.minimum(
        (i // 16) * 16 + 3, n - 1
    )  # lane 3 of each 16-lane segment (clamped read of x, as the kernel)
    np.testing.assert_array_equal(out["y"], xf[src] * np.float32(2))
    guards_intact(out, "y")


CG_ROWS = """
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// xlate: x: in[rows * cols], mean: out[rows], peak: out[rows], rows: size(1..300), cols: size(1..200),
// xlate: grid: cdiv(32 * rows, 128), block: 128
__global__ void row_stats(const float* x, float* mean, float* peak, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= rows) return;
    float s = 0.0f;
    float m = -1e30f;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) {
        float v = x[row * cols + c];
        s += v;
        m = fmaxf(m, v);
    }
    s = cg::reduce(warp, s, cg::plus<float>{});
    m = cg::reduce(warp, m, cg::greater<float>{});
    if (warp.thread_rank() == 0 && mean != nullptr) {
        __stcs(mean + row, s / cols);
        peak[row] = m;
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void hinted_copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && y != NULL) __stcs(&y[i], __ldcs(x + i) + 1.0f);
}
"""


def test_cg_reduce_over_warp_tiles_of_a_block(tmp_path):
    t = port(CG_ROWS)
    assert t.kernels == ["row_stats", "hinted_copy"], [d.format() for d in t.diagnostics]
    rows, cols = 37, 75  # the last block's warps past `rows` return before the reduction
    x = rng(5).standard_normal(rows * cols).astype(np.float32)
    out = run(
        t.text,
        "row_stats",
        [
            buf("x", x),
            buf("mean", poisoned(rows, np.float32)),
            buf("peak", poisoned(rows, np.float32)),
            ScalarArg("rows", rows, "int32"),
            ScalarArg("cols", cols, "int32"),
        ],
        tmp_path,
    )
    xr = x.reshape(rows, cols).astype(np.float64)
    np.testing.assert_allclose(out["mean"], xr.sum(axis=1) / cols, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["peak"], x.reshape(rows, cols).max(axis=1))
    guards_intact(out, "mean")
    guards_intact(out, "peak")
    n = 300
    out = run(
        t.text,
        "hinted_copy",
        [buf("x", x[:n]), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["y"], x[:n] + np.float32(1))


DYNAMIC_SHARED = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64, shmem: 256
__global__ void reverse_in_block(const float* x, float* y, int n) {
    extern __shared__ char raw[];
    float* s = reinterpret_cast<float*>(raw);
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
    if (i < n) y[i] = j < n ? s[blockDim.x - 1 - t] : -1.0f;
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64, shmem: 256
__global__ void bytes_and_floats(const float* x, float* y, int n) {
    extern __shared__ char raw[];
    float* s = (float*)raw;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = raw[t];
}
"""


def test_dynamic_shared_bytes_cast_to_one_type(tmp_path):
    t = port(DYNAMIC_SHARED)
    # the array read both as bytes and as floats keeps its byte type: its float view is refused
    assert t.kernels == ["reverse_in_block"], [d.format() for d in t.diagnostics]
    assert "bytes_and_floats" in {d.kernel for d in t.blocking}
    n = 1000
    x = rng(6).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "reverse_in_block",
        [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    i = np.arange(n)
    j = (i // 64) * 64 + 63 - i % 64
    want = np.where(j < n, x[np.minimum(j, n - 1)], np.float32(-1))
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")


TWO_LEVEL = """
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// xlate: x: in[n], out: out[cdiv(n, 256)], n: size(1..5000), grid: cdiv(n, 256), block: 256
__global__ void block_total(const float* x, float* out, int n) {
    __shared__ float partial[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float w = cg::reduce(warp, v, cg::plus<float>{});
    partial[threadIdx.x / 32] = w;                  // every lane of a warp stores the same warp sum
    __syncthreads();
    float p = threadIdx.x % 32 < 8 ? partial[threadIdx.x % 32] : 0.0f;
    float total = cg::reduce(warp, p, cg::plus<float>{});
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// xlate: x: in[n], out: out[cdiv(n, 256)], n: size(1..5000), grid: cdiv(n, 256), block: 256
__global__ void racy_store(const float* x, float* out, int n) {
    __shared__ float partial[8];
    int i = blockIdx.x * 256 + threadIdx.x;
    partial[threadIdx.x / 32] = i < n ? x[i] : 0.0f;  // the lanes of a warp store different values: a race
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = partial[3];
}
"""


def test_equal_stores_of_a_warp_to_one_element(tmp_path):
    t = port(TWO_LEVEL)
    assert t.kernels == ["block_total"], [d.format() for d in t.diagnostics]
    assert [(d.kernel, d.code) for d in t.blocking] == [("racy_store", "XL2009")]
    n = 1500
    x = rng(9).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "block_total",
        [buf("x", x), buf("out", poisoned(6, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_allclose(
        out["out"], np.add.reduceat(x.astype(np.float64), np.arange(0, n, 256)), rtol=1e-5
    )
    guards_intact(out, "out")
