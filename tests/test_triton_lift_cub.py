"""CUB block reductions (`cub::BlockReduce<T, N>(temp).Sum(v)`, `.Reduce(v, cub::Max(), valid)`), declared by
typedef or `using`, lift to Triton block reductions; called where not every thread reaches them they are
refused, as CUB's barriers would be. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
#include <cub/cub.cuh>
// xlate: x: in[n], out: out[cdiv(n, 128)], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void block_sum(const float* x, float* out, int n) {
    typedef cub::BlockReduce<float, 128> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    int i = blockIdx.x * 128 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float s = BlockReduce(temp).Sum(v * v);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// xlate: x: in[n], out: out[cdiv(n, 96)], n: size(1..5000), grid: cdiv(n, 96), block: 96
__global__ void block_max(const int* x, int* out, int n) {
    using R = cub::BlockReduce<int, 96>;
    __shared__ typename R::TempStorage temp;
    int i = blockIdx.x * 96 + threadIdx.x;
    int valid = min(96, n - (int)blockIdx.x * 96);
    int m = R(temp).Reduce(i < n ? x[i] : 0, cub::Max(), valid);
    if (threadIdx.x == 0) out[blockIdx.x] = m;
}

// xlate: x: in[n], out: inout[1], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void divergent(const float* x, float* out, int n) {
    typedef cub::BlockReduce<float, 128> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    int i = blockIdx.x * 128 + threadIdx.x;
    float s = 0.0f;
    if (i < n) s = BlockReduce(temp).Sum(x[i]);
    if (threadIdx.x == 0) atomicAdd(out, s);
}
"""


def test_block_reductions_of_cub(tmp_path):
    t = port(SRC)
    assert t.kernels == ["block_sum", "block_max"], [d.format() for d in t.diagnostics]
    assert [d.code for d in t.blocking] == ["XL2015"]  # divergent: not every thread reaches the reduction
    n = 1000
    x = rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "block_sum", [buf("x", x), buf("out", poisoned(8, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["out"], np.add.reduceat(x.astype(np.float64) ** 2, np.arange(0, n, 128)), rtol=1e-5)
    guards_intact(out, "out")
    xi = rng(2).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "block_max", [buf("x", xi), buf("out", poisoned(11, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    assert np.array_equal(out["out"], np.maximum.reduceat(xi, np.arange(0, n, 96)))


SRC_2D = """
#include <cub/cub.cuh>
template <typename T, int BX_, int BY_>
__device__ void both_sums(T& a, T& b) {
    using R = cub::BlockReduce<T, BX_, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY_>;
    __shared__ typename R::TempStorage ta;
    __shared__ typename R::TempStorage tb;
    a = R(ta).Sum(a);
    b = R(tb).Sum(b);
}

template <typename T>
__device__ void both_sums(T& a, T& b) {
    using R = cub::BlockReduce<T, 64>;
    __shared__ typename R::TempStorage ta;
    __shared__ typename R::TempStorage tb;
    a = R(ta).Sum(a);
    b = R(tb).Sum(b);
}

// xlate: x: in[c * m], s: out[c], q: out[c], m: size(1..3000), c: size(1..20), grid: c, block: (4, 16)
__global__ void col_moments_2d(const float* x, float* s, float* q, int m, int c) {
    float a = 0.0f, b = 0.0f;
    for (int i = threadIdx.y * 4 + threadIdx.x; i < m; i += 64) {
        float v = x[blockIdx.x * m + i];
        a += v;
        b += v * v;
    }
    both_sums<float, 4, 16>(a, b);
    if (threadIdx.x == 0 && threadIdx.y == 0) { s[blockIdx.x] = a; q[blockIdx.x] = b; }
}

// xlate: x: in[c * m], s: out[c], q: out[c], m: size(1..3000), c: size(1..20), grid: c, block: 64
__global__ void col_moments_1d(const float* x, float* s, float* q, int m, int c) {
    float a = 0.0f, b = 0.0f;
    for (int i = threadIdx.x; i < m; i += 64) {
        float v = x[blockIdx.x * m + i];
        a += v;
        b += v * v;
    }
    both_sums<float>(a, b);  // the overload with one template parameter
    if (threadIdx.x == 0) { s[blockIdx.x] = a; q[blockIdx.x] = b; }
}
"""


def test_cub_reduction_over_a_2d_block_and_overloads_by_template_arity(tmp_path):
    """`cub::BlockReduce<T, X, ALGORITHM, Y>` reduces over X * Y threads; `f<T>(...)` names the overload with one
    template parameter, not one whose other parameters cannot be deduced."""
    t = port(SRC_2D)
    assert t.kernels == ["col_moments_2d", "col_moments_1d"], [d.format() for d in t.diagnostics]
    m, c = 1001, 7
    x = rng(3).standard_normal(c * m).astype(np.float32)
    ref = x.astype(np.float64).reshape(c, m)
    for k in t.kernels:
        out = run(t.text, k, [buf("x", x), buf("s", poisoned(c, np.float32)), buf("q", poisoned(c, np.float32)),
                              ScalarArg("m", m, "int32"), ScalarArg("c", c, "int32")], tmp_path)
        np.testing.assert_allclose(out["s"], ref.sum(axis=1), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(out["q"], (ref ** 2).sum(axis=1), rtol=1e-4)
        guards_intact(out, "s")
        guards_intact(out, "q")


IO_SRC = """
#include <cub/cub.cuh>
using namespace cub;
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: 3, block: 32
__global__ void blocked_io(const float* x, int* y, int n) {
    float vals[4];
    int q[4];
    typedef BlockLoad<float, 32, 4> Load;
    typedef BlockStore<int, 32, 4> Store;
    __shared__ typename Load::TempStorage lt;
    __shared__ typename Store::TempStorage st;
    for (int i = blockIdx.x * 128; i < n; i += gridDim.x * 128) {
        int valid = min(n - i, 128);
        Load(lt).Load(&x[i], vals, valid, -7.5f);
        for (int j = 0; j < 4; j++) q[j] = (int)(vals[j] * 10.0f) + j * 1000 + threadIdx.x * 100000;
        Store(st).Store(y + i, q, valid);
    }
}

// xlate: x: in[n], y: out[n], n: size(1..5000), grid: cdiv(n, 96), block: 32
__global__ void striped_io(const int* x, int* y, int n) {
    int v[3];
    typedef cub::BlockLoad<int, 32, 3, cub::BLOCK_LOAD_STRIPED> L;
    typedef cub::BlockStore<int, 32, 3, cub::BLOCK_STORE_DIRECT> S;
    __shared__ typename L::TempStorage lt;
    __shared__ typename S::TempStorage st;
    int base = blockIdx.x * 96;
    L(lt).Load(x + base, v, n - base, -1);  // the items past the end take -1
    for (int j = 0; j < 3; j++) v[j] = v[j] * 2 + j;
    S(st).Store(y + base, v, n - base);
}
"""


def test_block_loads_and_stores_of_cub(tmp_path):
    t = port(IO_SRC)
    assert t.kernels == ["blocked_io", "striped_io"], [d.format() for d in t.diagnostics]
    n = 1001  # a partial last segment, and more segments than the grid covers at once
    x = rng(3).standard_normal(n).astype(np.float32)
    out = run(t.text, "blocked_io", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    k = np.arange(n)
    want = (x * np.float32(10)).astype(np.int32) + (k % 4) * 1000 + ((k % 128) // 4) * 100000
    assert np.array_equal(out["y"], want)
    guards_intact(out, "y")
    xi = rng(4).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "striped_io", [buf("x", xi), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    # striped load: item j of thread t is element j * 32 + t; the direct store puts it at t * 3 + j
    want = np.full(n, 99, np.int32)
    for b in range(0, n, 96):
        for t_ in range(32):
            for j in range(3):
                src, dst = b + j * 32 + t_, b + t_ * 3 + j
                if dst < n:
                    want[dst] = (xi[src] if src < n else -1) * 2 + j
    assert np.array_equal(out["y"], want)
    guards_intact(out, "y")
