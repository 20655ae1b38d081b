"""Staging loops: a block copies a range into shared memory with a lane-strided loop (`for (k = tid; k < B + R;
k += blockDim.x) s[k] = x[base + k];`), then reads it back after a barrier. Each read becomes the loop's value
for the element read, loaded where it is used. Ports run under the Triton interpreter against NumPy; loops the
rule cannot stand for (a value of the writing thread, memory stored to before the read, a per-thread condition
around the loop) stay refused."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

HALO = """
#define R 5
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void window_sum(const float* x, float* y, int n) {
    __shared__ float s[64 + R];
    int base = blockIdx.x * blockDim.x;
    for (int k = threadIdx.x; k < blockDim.x + R; k += blockDim.x)
        if (base + k < n) s[k] = 2.0f * x[base + k];
    __syncthreads();
    int i = base + threadIdx.x;
    if (i + R <= n) {
        float acc = 0.0f;
        for (int j = 0; j < R; ++j) acc += s[threadIdx.x + j];
        y[i] = acc;
    }
}

// xlate: a: in[rows * C], b: in[C], c: out[rows * C], rows: size(1..64), C: size(1..300),
// xlate: grid: cdiv(rows * C, 128), block: 128, shmem: 4 * C
__global__ void scale_rows(const float* a, const float* b, float* c, int rows, int C) {
    extern __shared__ char raw[];
    float* sb = reinterpret_cast<float*>(raw);
    for (int k = threadIdx.x; k < C; k += blockDim.x) sb[k] = b[k];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * C) c[i] = a[i] * sb[i % C];
}
"""


def test_staging_loops_read_back(tmp_path):
    t = port(HALO)
    assert t.kernels == ["window_sum", "scale_rows"], [d.format() for d in t.diagnostics]
    assert any(d.code == "XL2021" and "staging loop" in d.message for d in t.diagnostics)
    n = 1000
    x = rng(11).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "window_sum",
        [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    want = np.array([(2 * x[i : i + 5].astype(np.float64)).sum() for i in range(n - 4)])
    np.testing.assert_allclose(out["y"][: n - 4], want, rtol=1e-5, atol=1e-6)
    assert np.isnan(out["y"][n - 4 :]).all()  # never written
    guards_intact(out, "y")
    rows, C = 37, 211
    a = rng(12).standard_normal(rows * C).astype(np.float32)
    b = rng(13).standard_normal(C).astype(np.float32)
    out = run(
        t.text,
        "scale_rows",
        [
            buf("a", a),
            buf("b", b),
            buf("c", poisoned(rows * C, np.float32)),
            ScalarArg("rows", rows, "int32"),
            ScalarArg("C", C, "int32"),
        ],
        tmp_path,
    )
    np.testing.assert_array_equal(out["c"], a * np.tile(b, rows))
    guards_intact(out, "c")


REFUSED = """
// xlate: x: in[n], y: out[n], n: size(1..4096), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void writer_value(const float* x, float* y, int n, int m) {
    __shared__ float s[64];
    for (int k = threadIdx.x; k < m; k += blockDim.x) s[k] = x[k] * threadIdx.x;  // the writer's thread index
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x < m) y[i] = s[threadIdx.x];
}

// xlate: x: inout[n], y: out[n], n: size(1..4096), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void stored_between(float* x, float* y, int n, int m) {
    __shared__ float s[64];
    int base = blockIdx.x * blockDim.x;
    for (int k = threadIdx.x; k < m; k += blockDim.x) s[k] = x[min(base + k, n - 1)];
    __syncthreads();
    int i = base + threadIdx.x;
    if (i < n) x[i] = 0.0f;                          // the staged memory changes before the read
    if (i < n && threadIdx.x < m) y[i] = s[threadIdx.x];
}

// xlate: x: in[n], y: out[n], n: size(1..4096), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void some_threads(const float* x, float* y, int n, int m) {
    __shared__ float s[64];
    if (threadIdx.x < 32)                            // half the threads: the other half's elements unwritten
        for (int k = threadIdx.x; k < m; k += blockDim.x) s[k] = x[k];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x < m) y[i] = s[threadIdx.x];
}
"""


def test_staging_loops_the_rule_cannot_stand_for_are_refused():
    # the staging rule stands for none of them; two lift anyway with the array carried through the loop as block
    # tensors (carry.py; their values: test_triton_lift_loop_shared.py), the third reads a buffer changed since
    t = port(REFUSED)
    assert t.kernels == ["writer_value", "some_threads"], [d.format() for d in t.diagnostics]
    assert {d.kernel for d in t.blocking} == {"stored_between"}
