"""`__syncwarp()` under a condition every warp takes or skips as a whole (`if (tid < 32) { ...; __syncwarp();
... }`, the last steps of a shared tree reduction done by one warp) syncs all the threads of the warps it
concerns, so it lifts; under a condition that splits a warp it stays refused. Ports run under the Triton
interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
__device__ void last_warp(volatile double* s, int t) {
    double v = s[t];
    v += s[t + 32]; __syncwarp();
    s[t] = v;       __syncwarp();
    v += s[t + 16]; __syncwarp();
    s[t] = v;       __syncwarp();
    v += s[t + 8];  __syncwarp();
    s[t] = v;       __syncwarp();
    v += s[t + 4];  __syncwarp();
    s[t] = v;       __syncwarp();
    v += s[t + 2];  __syncwarp();
    s[t] = v;       __syncwarp();
    v += s[t + 1];  __syncwarp();
    s[t] = v;
}

// xlate: x: in[n], out: out[cdiv(n, 128)], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void dot_blocks(const double* x, double* out, int n) {
    __shared__ double s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] * x[i] : 0.0;
    __syncthreads();
    if (t < 64) s[t] += s[t + 64];
    __syncthreads();
    if (t < 32) last_warp(s, t);
    if (t == 0) out[blockIdx.x] = s[0];
}

// xlate: x: in[n], out: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void split_warp(const float* x, float* out, int n) {
    int i = blockIdx.x * 128 + threadIdx.x;
    if (threadIdx.x < 16) __syncwarp();
    if (i < n) out[i] = x[i];
}
"""


def test_syncwarp_under_a_warp_uniform_condition(tmp_path):
    t = port(SRC)
    assert t.kernels == ["dot_blocks"], [d.format() for d in t.diagnostics]
    assert [d.code for d in t.blocking] == ["XL2015"] and "__syncwarp" in t.blocking[0].message
    n = 1000
    x = rng(1).standard_normal(n)
    blocks = -(-n // 128)
    out = run(t.text, "dot_blocks", [buf("x", x), buf("out", poisoned(blocks, np.float64)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["out"], np.add.reduceat(x ** 2, np.arange(0, n, 128)), rtol=1e-12)
    guards_intact(out, "out")
