"""A shared tile written at `tx * P + ty` by a block taller than P along y: the map is one-to-one only on the
threads a thread-index guard leaves (`if (ty >= P) return;`). The writers' extent comes from their conditions,
the unknown parts of a condition (`i >= n`) tried both ways, so each element has one writer and the read is
forwarded. Ports run under the Triton interpreter against NumPy; a guard that leaves two writers of one element,
or none that thread indices decide, stays refused."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

GUARDED = """
#define ROWS 10
// xlate: x: in[n * 3], w: in[10], y: out[n], n: size(1..3000), grid: cdiv(n, 8), block: (8, 16)
__global__ void weighted_rows(const float* x, const float* w, float* y, int n) {
    int tx = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tx;
    if (i >= n) return;
    int ty = threadIdx.y;
    if (ty >= ROWS) return;
    __shared__ float part[8 * ROWS];
    part[tx * ROWS + ty] = x[i * 3 + ty % 3] * w[ty] + (float)ty;
    __syncthreads();
    if (ty == 0) {
        float acc = 0.0f;
        for (int k = 0; k < ROWS; k++) acc += part[tx * ROWS + k];
        y[i] = acc;
    }
}
"""


def test_a_pitch_one_to_one_on_the_guarded_threads_is_forwarded(tmp_path):
    t = port(GUARDED)
    assert t.kernels == ["weighted_rows"], [d.format() for d in t.diagnostics]
    for n in (1, 13, 203):  # not multiples of the 8 threads along x
        x = rng(n).standard_normal(n * 3).astype(np.float32)
        w = rng(n + 1).standard_normal(10).astype(np.float32)
        out = run(t.text, "weighted_rows",
                  [buf("x", x), buf("w", w), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
        k = np.arange(10)
        want = (x.reshape(n, 3)[:, k % 3].astype(np.float64) * w[k] + k).sum(axis=1)
        np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
        guards_intact(out, "y")


REFUSED = """
// two writers of one element: ty < 12 with a pitch of 10 (tx * 10 + 10 == (tx + 1) * 10 + 0)
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 8), block: (8, 16)
__global__ void overlapping(const float* x, float* y, int n) {
    int tx = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tx;
    if (i >= n) return;
    if (threadIdx.y >= 12) return;
    __shared__ float part[8 * 12];
    part[tx * 10 + threadIdx.y] = x[i] + threadIdx.y;
    __syncthreads();
    if (threadIdx.y == 0) y[i] = part[tx * 10 + 3];
}

// the guard is data: no extent along y follows from thread indices
// xlate: x: in[n], m: in[1], y: out[n], n: size(1..3000), grid: cdiv(n, 8), block: (8, 16)
__global__ void data_guard(const float* x, const int* m, float* y, int n) {
    int tx = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tx;
    if (i >= n) return;
    if (threadIdx.y >= m[0]) return;
    __shared__ float part[8 * 16];
    part[tx * 10 + threadIdx.y] = x[i] + threadIdx.y;
    __syncthreads();
    if (threadIdx.y == 0) y[i] = part[tx * 10 + 3];
}
"""


def test_guards_that_leave_several_or_unknown_writers_stay_refused():
    t = port(REFUSED)
    assert t.kernels == [], t.text
    msgs = [d.message for d in t.diagnostics if d.code == "XL2004"]
    assert len(msgs) == 2 and all("part" in m for m in msgs), msgs
