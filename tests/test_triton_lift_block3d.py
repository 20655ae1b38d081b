"""A 3-D block lifts as a 2-D one: its (y, z) threads are the program's y lanes, y + Y * z, so the linear thread
index is CUDA's; threadIdx.y and threadIdx.z are that lane's remainder and quotient by Y, blockDim.y and .z the
block's extents. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: cdiv(n, 96), block: (8, 4, 3)
__global__ void tag_threads(const float* x, float* y, int n) {
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int i = blockIdx.x * (blockDim.x * blockDim.y * blockDim.z) + t;
    if (i < n) y[i] = x[i] + (float)(threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z);
}

// xlate: x: in[n], out: out[cdiv(n, 64)], n: size(1..5000), grid: cdiv(n, 64), block: (4, 4, 4)
__global__ void cube_sums(const float* x, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x + 4 * (threadIdx.y + 4 * threadIdx.z);
    int i = blockIdx.x * 64 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_three_dimensional_blocks(tmp_path):
    t = port(SRC)
    assert t.kernels == ["tag_threads", "cube_sums"], [d.format() for d in t.diagnostics]
    n = 1000
    x = rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "tag_threads", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    lin = np.arange(n) % 96
    tx, ty, tz = lin % 8, (lin // 8) % 4, lin // 32
    np.testing.assert_array_equal(out["y"], (x + (tx + 10 * ty + 100 * tz)).astype(np.float32))
    guards_intact(out, "y")

    blocks = -(-n // 64)
    out = run(t.text, "cube_sums", [buf("x", x), buf("out", poisoned(blocks, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["out"], np.add.reduceat(x.astype(np.float64), np.arange(0, n, 64)),
                               rtol=1e-5, atol=1e-5)
    guards_intact(out, "out")
